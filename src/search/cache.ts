/**
 * The per-user result cache of searchDatabases: whole response pages by a key that already contains the user, the
 * request and each searched connection's id and updatedAt (so an edited connection misses everywhere at once).
 * `forgetDatabase` drops what a connection's change makes stale (connectionListeners). Only searches where every
 * database answered are cached. Memory by default, Redis (cache-redis.ts) when REDIS_URL is set; a cache failure is
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

/** In-process, least recently used out first beyond `maxEntries`. */
export class MemoryResultCache implements ResultCache {
  readonly enabled = true;
  private readonly entries = new Map<string, { value: string; expires: number; databaseIds: string[] }>();
  private readonly byDatabase = new Map<string, Set<string>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 2000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<string | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expires <= this.now()) {
      this.drop(key);
      return null;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  async set(key: string, value: string, databaseIds: string[]): Promise<void> {
    this.drop(key);
    this.entries.set(key, { value, expires: this.now() + this.ttlMs, databaseIds });
    for (const id of databaseIds) {
      const keys = this.byDatabase.get(id) ?? new Set<string>();
      keys.add(key);
      this.byDatabase.set(id, keys);
    }
    while (this.entries.size > this.maxEntries) this.drop(this.entries.keys().next().value!);
  }

  async forgetDatabase(databaseId: string): Promise<void> {
    for (const key of this.byDatabase.get(databaseId) ?? []) this.drop(key);
    this.byDatabase.delete(databaseId);
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.byDatabase.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const id of entry.databaseIds) {
      const keys = this.byDatabase.get(id);
      keys?.delete(key);
      if (keys?.size === 0) this.byDatabase.delete(id);
    }
  }
}
