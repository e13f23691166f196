import { LRUCache } from 'lru-cache';

/**
 * The per-user result cache of searchDatabases: whole response pages by a key that already contains the user, the
 * request and each searched connection's id and updatedAt (so an edited connection misses everywhere at once).
 * `forgetDatabase` drops what a connection's change makes stale (connection.changed, index.synced). Only searches where every
 * database answered are cached. Memory by default, Redis (result-cache-redis.ts) when REDIS_URL is set; a cache failure is
 * a miss, never an error.
 */
export interface ResultCache {
  /** False when nothing is cached (SEARCH_CACHE_TTL_MS=0): callers skip building keys and values. */
  readonly enabled: boolean;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, databaseIds: string[]): Promise<void>;
  forgetDatabase(databaseId: string): Promise<void>;
  close(): Promise<void>;
}

/** SEARCH_CACHE_TTL_MS=0: nothing is cached. */
export class NoResultCache implements ResultCache {
  readonly enabled = false;
  async get(): Promise<string | null> {
    return null;
  }
  async set(): Promise<void> {}
  async forgetDatabase(): Promise<void> {}
  async close(): Promise<void> {}
}

/** In-process (lru-cache): the least recently used page leaves first beyond `maxEntries`, none outlives `ttlMs`. */
export class MemoryResultCache implements ResultCache {
  readonly enabled = true;
  private readonly entries: LRUCache<string, { value: string; databaseIds: string[] }>;
  /** The cached pages that read each connection, so a changed connection drops exactly those. */
  private readonly byDatabase = new Map<string, Set<string>>();

  constructor(ttlMs: number, maxEntries = 2000, now: () => number = Date.now) {
    this.entries = new LRUCache({
      max: maxEntries,
      ttl: ttlMs,
      ttlResolution: 0,
      perf: { now },
      dispose: (entry, key) => {
        for (const id of entry.databaseIds) {
          const keys = this.byDatabase.get(id);
          keys?.delete(key);
          if (keys?.size === 0) this.byDatabase.delete(id);
        }
      },
    });
  }

  async get(key: string): Promise<string | null> {
    return this.entries.get(key)?.value ?? null;
  }

  async set(key: string, value: string, databaseIds: string[]): Promise<void> {
    this.entries.set(key, { value, databaseIds });
    for (const id of databaseIds) {
      let keys = this.byDatabase.get(id);
      if (!keys) this.byDatabase.set(id, (keys = new Set()));
      keys.add(key);
    }
  }

  async forgetDatabase(databaseId: string): Promise<void> {
    for (const key of [...(this.byDatabase.get(databaseId) ?? [])]) this.entries.delete(key);
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
