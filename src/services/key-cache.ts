import { timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord } from '../repositories/api-key-repository.js';
import type { UserRecord } from '../repositories/user-repository.js';
import type { InvalidationBus } from '../lib/invalidation-bus.js';

interface Entry {
  key: ApiKeyRecord;
  user: UserRecord;
  storedAt: number;
  /**
   * The full key that was verified against the stored hash when this entry was made. Comparing a request's key
   * with it spares the HMAC on every request (it was a tenth of a key request's CPU); it lives only as long as
   * the entry (ttlMs) and only in this process's memory, which sees every presented key anyway.
   */
  verifiedSecret: Buffer;
}

/**
 * Verified keys by public id, so a key request does not read the store every time. Entries are dropped the
 * moment a key or its owner changes (revoke, regenerate, update, disable) in every process, through the
 * invalidation bus; `ttlMs` bounds how stale an entry can be should a message be lost (Redis down).
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** When each key / user was last invalidated: a read that started before it must not be cached. */
  private readonly invalidatedAt = new Map<string, number>();

  constructor(
    private readonly bus: InvalidationBus,
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
    private readonly now: () => number = Date.now,
  ) {
    bus.subscribe('key', (publicId) => {
      this.invalidatedAt.set(`key:${publicId}`, this.now());
      this.entries.delete(publicId);
    });
    bus.subscribe('user', (userId) => {
      this.invalidatedAt.set(`user:${userId}`, this.now());
      for (const [publicId, entry] of this.entries) if (entry.user.id === userId) this.entries.delete(publicId);
    });
  }

  get(publicId: string): Entry | null {
    const entry = this.entries.get(publicId);
    if (!entry) return null;
    if (this.now() - entry.storedAt > this.ttlMs) {
      this.entries.delete(publicId);
      return null;
    }
    return entry;
  }

  /** Whether `secret` is the very key this entry was verified with (in constant time). */
  static isVerified(entry: Entry, secret: string): boolean {
    const presented = Buffer.from(secret);
    return presented.length === entry.verifiedSecret.length && timingSafeEqual(presented, entry.verifiedSecret);
  }

  clock(): number {
    return this.now();
  }

  /**
   * Caches what a read that started at `readAt` found, unless the key or its user was invalidated since: a
   * revocation racing with that read must win.
   */
  set(publicId: string, key: ApiKeyRecord, user: UserRecord, readAt: number, verifiedSecret: string): void {
    const staleAfter = Math.max(this.invalidatedAt.get(`key:${publicId}`) ?? -1, this.invalidatedAt.get(`user:${user.id}`) ?? -1);
    if (staleAfter >= readAt) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(publicId, { key, user, storedAt: this.now(), verifiedSecret: Buffer.from(verifiedSecret) });
    // The invalidation marks only matter while such a read can be in flight; keep the map small.
    if (this.invalidatedAt.size > this.maxEntries) this.invalidatedAt.clear();
  }

  /** A key changed: every process drops it. */
  keyChanged(publicId: string): void {
    this.bus.publish('key', publicId);
  }

  /** A user changed (disabled): every process drops all their keys. */
  userChanged(userId: string): void {
    this.bus.publish('user', userId);
  }
}
