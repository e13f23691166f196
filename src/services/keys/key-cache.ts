import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { LastKnown, type LastKnownOptions } from '../../lib/last-known.js';
import { OwnedCache } from '../../lib/owned-cache.js';
import type { ApiKeyRecord } from '../../repositories/api-key-repository.js';
import type { UserRecord } from '../../repositories/user-repository.js';

export interface CachedKey {
  key: ApiKeyRecord;
  user: UserRecord;
  /**
   * The secret (its UTF-8 bytes) that matched the key's stored hash when the entry was read: a request presenting it
   * again is compared with it in constant time (api-key-secrets.ts sameSecret). Only in this short cache, never in
   * the outage memory.
   */
  secret?: Buffer;
}

/**
 * Key records and their owners by public id, so a key request does not read the store every time. The secret is
 * checked against the stored hash (an HMAC) when an entry is read; while the entry lives (`ttlMs`, seconds), against
 * the secret that matched, so a key's requests cost no HMAC each. Entries are dropped the moment a key or its owner
 * changes (revoke, regenerate, update, disable) in every process, through the invalidation bus; `ttlMs` bounds
 * how stale an entry can be should a message be lost (Redis down).
 *
 * `lastKnown` holds the same records longer (STORE_OUTAGE_GRACE_MS), for one use only: while Quarry's own store is
 * down, a key the store verified that recently still authenticates. The same bus messages drop it.
 */
export class KeyCache {
  private readonly cache: OwnedCache<CachedKey>;
  readonly lastKnown: LastKnown<CachedKey>;

  constructor(
    private readonly bus: InvalidationBus,
    ttlMs: number,
    max = 50_000,
    now: () => number = Date.now,
    outage: Pick<LastKnownOptions, 'graceMs' | 'isOutage'> = { graceMs: 0, isOutage: () => false },
  ) {
    this.cache = new OwnedCache({ max, ttlMs, now });
    this.lastKnown = new LastKnown({ ...outage, max, now });
    bus.subscribe('key', (publicId) => this.invalidate(`key:${publicId}`));
    bus.subscribe('user', (userId) => this.invalidate(`user:${userId}`));
  }

  /** The owners an entry of this key is filed under. */
  static owners(publicId: string, userId: string): string[] {
    return [`key:${publicId}`, `user:${userId}`];
  }

  get(publicId: string): CachedKey | null {
    return this.cache.get(publicId) ?? null;
  }

  clock(): number {
    return this.cache.now();
  }

  /** Caches what a read that started at `readAt` found, unless the key or its user changed since. */
  set(publicId: string, key: ApiKeyRecord, user: UserRecord, readAt: number, secret?: Buffer): void {
    this.cache.set(publicId, { key, user, secret }, KeyCache.owners(publicId, user.id), readAt);
  }

  /** Drops a key (or a user's keys) from both the cache and the outage memory. */
  private invalidate(owner: string): void {
    this.cache.invalidate(owner);
    this.lastKnown.invalidate(owner);
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
