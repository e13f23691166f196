import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { OwnedCache } from '../../lib/owned-cache.js';
import type { ApiKeyRecord } from '../../repositories/api-key-repository.js';
import type { UserRecord } from '../../repositories/user-repository.js';

export interface CachedKey {
  key: ApiKeyRecord;
  user: UserRecord;
}

/**
 * Key records and their owners by public id, so a key request does not read the store every time (the secret is
 * still checked against the stored hash on every request). Entries are dropped the moment a key or its owner
 * changes (revoke, regenerate, update, disable) in every process, through the invalidation bus; `ttlMs` bounds
 * how stale an entry can be should a message be lost (Redis down).
 */
export class KeyCache {
  private readonly cache: OwnedCache<CachedKey>;

  constructor(
    private readonly bus: InvalidationBus,
    ttlMs: number,
    max = 50_000,
    now: () => number = Date.now,
  ) {
    this.cache = new OwnedCache({ max, ttlMs, now });
    bus.subscribe('key', (publicId) => this.cache.invalidate(`key:${publicId}`));
    bus.subscribe('user', (userId) => this.cache.invalidate(`user:${userId}`));
  }

  get(publicId: string): CachedKey | null {
    return this.cache.get(publicId) ?? null;
  }

  clock(): number {
    return this.cache.now();
  }

  /** Caches what a read that started at `readAt` found, unless the key or its user changed since. */
  set(publicId: string, key: ApiKeyRecord, user: UserRecord, readAt: number): void {
    this.cache.set(publicId, { key, user }, [`key:${publicId}`, `user:${user.id}`], readAt);
  }

  /** A key changed: every process drops it. */
  keyChanged(publicId: string): void {
    this.bus.publish('key', publicId);
  }

  /** A user changed (disabled, renamed): every process drops all their keys. */
  userChanged(userId: string): void {
    this.bus.publish('user', userId);
  }
}
