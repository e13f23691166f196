import { LRUCache } from 'lru-cache';

/**
 * A small in-process cache of promises per connection (lru-cache: the least recently used connection leaves first
 * beyond `maxEntries`, none is kept longer than `ttlMs`). Concurrent callers share one load, a failed load is not
 * kept, and `stamp` (the connection's updatedAt) makes an entry of an edited connection miss at once, in every process.
 */
export class TtlCache<T> {
  private readonly entries: LRUCache<string, { stamp: string; value: Promise<T> }>;

  constructor(ttlMs: number, maxEntries = 1000, now: () => number = Date.now) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs, ttlResolution: 0, perf: { now } });
  }

  get(id: string, stamp: string, load: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(id);
    if (entry && entry.stamp === stamp) return entry.value;
    const value = load();
    this.entries.set(id, { stamp, value });
    value.catch(() => {
      if (this.entries.get(id)?.value === value) this.entries.delete(id);
    });
    return value;
  }

  forget(id: string): void {
    this.entries.delete(id);
  }
}
