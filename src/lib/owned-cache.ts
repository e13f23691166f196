import { LRUCache } from 'lru-cache';

export interface OwnedCacheOptions {
  /** Most entries kept; beyond it the least recently used leaves. */
  max: number;
  /** No entry is older than this: the bound on staleness should an invalidation be lost (Redis down). */
  ttlMs: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  owners: readonly string[];
}

/**
 * What a read from the store found, kept in memory until what it was read from changes. lru-cache keeps the entries
 * (least recently used out beyond `max`, none older than `ttlMs`). Each entry is filed under its owners (a key, a
 * user, a session): `invalidate(owner)` drops that owner's entries, and from then on refuses what a read that began
 * before it found, so a change racing with a read (a revocation, a logout) always wins.
 */
export class OwnedCache<V extends object> {
  readonly now: () => number;
  private readonly entries: LRUCache<string, Entry<V>>;
  private readonly keysOf = new Map<string, Set<string>>();
  /** When each owner was last invalidated, kept as long as room allows. */
  private readonly invalidatedAt: LRUCache<string, number>;
  /** Reads that began at or before this moment are not kept: set when a mark had to make room. */
  private floor = -Infinity;

  constructor(options: OwnedCacheOptions) {
    this.now = options.now ?? Date.now;
    const perf = { now: this.now };
    this.entries = new LRUCache<string, Entry<V>>({
      max: options.max,
      ttl: options.ttlMs,
      // Every check reads the clock (lru-cache otherwise reuses a reading for a millisecond).
      ttlResolution: 0,
      perf,
      dispose: (entry, key) => this.unfile(key, entry.owners),
    });
    this.invalidatedAt = new LRUCache<string, number>({
      max: options.max,
      perf,
      dispose: (at, _owner, reason) => {
        if (reason === 'evict') this.floor = Math.max(this.floor, at);
      },
    });
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Whether what a read that began at `readAt` found may be kept: none of its owners was invalidated since. */
  keeps(owners: readonly string[], readAt: number): boolean {
    return readAt > this.floor && owners.every((owner) => (this.invalidatedAt.get(owner) ?? -Infinity) < readAt);
  }

  /** Keeps what a read that began at `readAt` found, unless one of its owners was invalidated since. */
  set(key: string, value: V, owners: readonly string[], readAt: number): boolean {
    if (!this.keeps(owners, readAt)) return false;
    this.entries.set(key, { value, owners });
    for (const owner of owners) {
      let keys = this.keysOf.get(owner);
      if (!keys) this.keysOf.set(owner, (keys = new Set()));
      keys.add(key);
    }
    return true;
  }

  invalidate(owner: string): void {
    this.invalidatedAt.set(owner, this.now());
    for (const key of [...(this.keysOf.get(owner) ?? [])]) this.entries.delete(key);
  }

  /** Everything changed (rows deleted in bulk): drops every entry and every read in flight. */
  invalidateAll(): void {
    this.floor = this.now();
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private unfile(key: string, owners: readonly string[]): void {
    for (const owner of owners) {
      const keys = this.keysOf.get(owner);
      keys?.delete(key);
      if (keys?.size === 0) this.keysOf.delete(owner);
    }
  }
}
