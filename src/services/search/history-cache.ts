import { LRUCache } from 'lru-cache';
import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { OwnedCache } from '../../lib/owned-cache.js';

/** Bus topic; the id is a user id, or `*` when any user's history may have changed (retention). */
export const HISTORY_TOPIC = 'search-history';

/**
 * Pages of a user's search history (getSearchHistory), so a client polling its history does not read the store on
 * every call. A user's pages are dropped in this process the moment one of their searches is recorded (it may not be
 * written yet), and in every process (invalidation bus) once it is written; `ttlMs` bounds how stale a page can be
 * should a message be lost (Redis down). The least recently used user leaves first beyond `maxUsers`, and a user's
 * least recently read page beyond `maxPagesPerUser` (a client walking every offset must not grow memory).
 */
export class HistoryCache<Page extends object> {
  private readonly users: OwnedCache<LRUCache<string, Page>>;

  constructor(
    private readonly bus: InvalidationBus,
    ttlMs: number,
    maxUsers = 10_000,
    now: () => number = Date.now,
    private readonly maxPagesPerUser = 20,
  ) {
    this.users = new OwnedCache({ max: maxUsers, ttlMs, now });
    bus.subscribe(HISTORY_TOPIC, (userId) => this.forget(userId));
  }

  clock(): number {
    return this.users.now();
  }

  get(userId: string, page: string): Page | null {
    return this.users.get(userId)?.get(page) ?? null;
  }

  /** Keeps what a read that started at `readAt` found, unless the user's history changed since. */
  set(userId: string, page: string, value: Page, readAt: number): void {
    if (!this.users.keeps([userId], readAt)) return;
    let pages = this.users.get(userId);
    if (!pages) {
      pages = new LRUCache<string, Page>({ max: this.maxPagesPerUser });
      this.users.set(userId, pages, [userId], readAt);
    }
    pages.set(page, value);
  }

  /** A search of the user was recorded here: this process, which alone can see it before it is written, reads again. */
  forget(userId: string): void {
    if (userId === '*') this.users.invalidateAll();
    else this.users.invalidate(userId);
  }

  /** The user's searches are in the store now (or `*`: rows were deleted): every process reads again. */
  changed(userId: string): void {
    this.bus.publish(HISTORY_TOPIC, userId);
  }
}
