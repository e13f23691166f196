import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { OwnedCache } from '../../lib/owned-cache.js';
import type { SessionRecord } from '../../repositories/session-repository.js';
import type { UserRecord } from '../../repositories/user-repository.js';

export interface CachedSession {
  session: SessionRecord;
  user: UserRecord;
}

/**
 * Sessions with their users, and the ids of each user's connected databases, so a JWT request (getProfile and every
 * other JWT operation) does not read the store every time. An entry goes the moment what it was read from changes,
 * in every process (invalidation bus): a session when it ends, a user's sessions when the account changes (profile,
 * password, disable, login), a user's database ids when a connection is added or removed. `ttlMs` bounds how stale
 * an entry can be should a message be lost (Redis down).
 */
export class AccountCache {
  private readonly sessions: OwnedCache<CachedSession>;
  private readonly databaseIds: OwnedCache<string[]>;

  constructor(
    private readonly bus: InvalidationBus,
    ttlMs: number,
    max = 50_000,
    now: () => number = Date.now,
  ) {
    this.sessions = new OwnedCache({ max, ttlMs, now });
    this.databaseIds = new OwnedCache({ max, ttlMs, now });
    bus.subscribe('session', (sessionId) => this.sessions.invalidate(`session:${sessionId}`));
    // The same topic drops the user's keys from the key cache.
    bus.subscribe('user', (userId) => this.sessions.invalidate(`user:${userId}`));
    bus.subscribe('user-databases', (userId) => this.databaseIds.invalidate(userId));
  }

  clock(): number {
    return this.sessions.now();
  }

  session(sessionId: string): CachedSession | null {
    return this.sessions.get(sessionId) ?? null;
  }

  /** Keeps a session and its user as a read that began at `readAt` found them, unless either changed since. */
  keepSession(sessionId: string, session: SessionRecord, user: UserRecord, readAt: number): void {
    this.sessions.set(sessionId, { session, user }, [`session:${sessionId}`, `user:${user.id}`], readAt);
  }

  connectedDatabases(userId: string): string[] | null {
    return this.databaseIds.get(userId) ?? null;
  }

  keepConnectedDatabases(userId: string, ids: string[], readAt: number): void {
    this.databaseIds.set(userId, ids, [userId], readAt);
  }

  /** A session ended (logout, a reused refresh token): every process drops it. */
  sessionEnded(sessionId: string): void {
    this.bus.publish('session', sessionId);
  }

  /** An account changed (its record or all its sessions): every process drops its sessions and keys. */
  userChanged(userId: string): void {
    this.bus.publish('user', userId);
  }

  /** A user's connections were added or removed: every process reads the list again. */
  databasesChanged(userId: string): void {
    this.bus.publish('user-databases', userId);
  }
}
