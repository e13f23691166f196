import { OwnedCache } from './owned-cache.js';

export interface LastKnownOptions {
  /** How long what the store answered may stand in for it while it is down; 0 keeps nothing. */
  graceMs: number;
  /**
   * How long what the store answered is used without asking it again (0: every read asks). Changes announced on the
   * invalidation bus drop it at once; this bounds how stale an answer is should an announcement be lost.
   */
  freshMs?: number;
  /** The failure that means the store is down, unreachable or busy: the only one a remembered answer may cover. */
  isOutage(error: unknown): boolean;
  max?: number;
  now?: () => number;
}

/**
 * What the store last answered to a read, kept for `graceMs` so that during an outage of the store a caller seen
 * recently keeps working (a key used in the last minute keeps searching). Only an outage is covered: when the store
 * answers, its answer (a revoked key, a connection gone) is what counts, and every success replaces the memory.
 * Entries are filed under owners like OwnedCache's, so a change (a revoked key, an edited connection) drops them
 * in every process the invalidation bus reaches, and a read racing with that change is not kept.
 */
export class LastKnown<V extends object> {
  private readonly entries: OwnedCache<{ value: V; readAt: number }> | null;

  constructor(private readonly options: LastKnownOptions) {
    const keepMs = Math.max(options.graceMs, options.freshMs ?? 0);
    this.entries = keepMs > 0
      ? new OwnedCache({ max: options.max ?? 50_000, ttlMs: keepMs, now: options.now })
      : null;
  }

  /** Whether `error` is the store being down (what a remembered answer may stand in for). */
  isOutage(error: unknown): boolean {
    return this.options.isOutage(error);
  }

  /** When a read begins: what it finds is kept only if none of its owners changes after this moment. */
  clock(): number {
    return this.entries?.now() ?? 0;
  }

  /**
   * `load` from the store, remembered under `key`; should the store be down, the answer remembered from the last
   * `graceMs` instead. Any other failure, or an outage with nothing remembered, is thrown as it is.
   */
  async read(key: string, owners: (value: V) => readonly string[], load: () => Promise<V>): Promise<V> {
    const readAt = this.clock();
    const fresh = this.entries?.get(key);
    if (fresh && readAt - fresh.readAt < (this.options.freshMs ?? 0)) return fresh.value;
    try {
      const value = await load();
      this.remember(key, value, owners(value), readAt);
      return value;
    } catch (error) {
      const known = this.isOutage(error) ? this.recall(key) : undefined;
      if (known === undefined) throw error;
      return known;
    }
  }

  /** Keeps what a read that began at `readAt` found, unless an owner changed since. */
  remember(key: string, value: V, owners: readonly string[], readAt: number): void {
    this.entries?.set(key, { value, readAt }, owners, readAt);
  }

  /** What was remembered under `key` in the last `graceMs`, if anything. */
  recall(key: string): V | undefined {
    const known = this.entries?.get(key);
    return known && this.clock() - known.readAt <= this.options.graceMs ? known.value : undefined;
  }

  /** An owner changed: what was remembered of it is dropped, and reads already under way are not kept. */
  invalidate(owner: string): void {
    this.entries?.invalidate(owner);
  }
}
