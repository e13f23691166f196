import type { InvalidationBus } from '../lib/invalidation-bus.js';

/** Bus topic; the id is a user id, or `*` when any user's history may have changed (retention). */
export const HISTORY_TOPIC = 'search-history';

/**
 * Pages of a user's search history (getSearchHistory), so a client polling its history does not read the store on
 * every call. A user's pages are dropped in this process the moment one of their searches is recorded (it may not be
 * written yet), and in every process (invalidation bus) once it is written; `ttlMs` bounds how stale a page can be
 * should a message be lost (Redis down).
 */
export class HistoryCache<Page> {
  private readonly users = new Map<string, { pages: Map<string, Page>; storedAt: number }>();
  /** When each user's history last changed: a read that started before it must not be cached (as in KeyCache). */
  private readonly changedAt = new Map<string, number>();
  private everythingChangedAt = -Infinity;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly ttlMs: number,
    private readonly maxUsers = 10_000,
    private readonly now: () => number = Date.now,
    /** Pages kept per user: a client walking through every offset must not grow memory without bound. */
    private readonly maxPagesPerUser = 20,
  ) {
    bus.subscribe(HISTORY_TOPIC, (userId) => this.forget(userId));
  }

  clock(): number {
    return this.now();
  }

  get(userId: string, page: string): Page | null {
    const entry = this.users.get(userId);
    if (!entry) return null;
    if (this.now() - entry.storedAt > this.ttlMs) {
      this.users.delete(userId);
      return null;
    }
    return entry.pages.get(page) ?? null;
  }

  /** Keeps what a read that started at `readAt` found, unless the user's history changed since. */
  set(userId: string, page: string, value: Page, readAt: number): void {
    if (Math.max(this.changedAt.get(userId) ?? -Infinity, this.everythingChangedAt) >= readAt) return;
    let entry = this.users.get(userId);
    if (!entry) {
      if (this.users.size >= this.maxUsers) this.users.delete(this.users.keys().next().value!);
      entry = { pages: new Map(), storedAt: this.now() };
      this.users.set(userId, entry);
    }
    if (entry.pages.size >= this.maxPagesPerUser) entry.pages.delete(entry.pages.keys().next().value!);
    entry.pages.set(page, value);
  }

  /** A search of the user was recorded here: this process, which alone can see it before it is written, reads again. */
  forget(userId: string): void {
    const at = this.now();
    if (userId === '*') {
      this.everythingChangedAt = at;
      this.users.clear();
      this.changedAt.clear();
      return;
    }
    this.changedAt.set(userId, at);
    this.users.delete(userId);
    // The marks only matter while a read can be in flight; keep the map small, and let no read from before the
    // clearing be cached.
    if (this.changedAt.size > this.maxUsers) {
      this.changedAt.clear();
      this.everythingChangedAt = at;
    }
  }

  /** The user's searches are in the store now (or `*`: rows were deleted): every process reads again. */
  changed(userId: string): void {
    this.bus.publish(HISTORY_TOPIC, userId);
  }
}
