/**
 * The result cache in Redis, shared by every Quarry process on the same server. Entries are `<prefix>r:<key>` with a
 * TTL; `<prefix>db:<databaseId>` is a set of the entries that read that connection, so a change drops them in one
 * round trip. Connected like the rate-limit store (short command timeout, no queueing while disconnected): a slow or
 * absent Redis is a cache miss.
 */
import { Redis } from 'ioredis';
import type { RedisHealthSink } from '../../lib/invalidation-bus.js';
import type { ResultCache } from './result-cache.js';

export const DEFAULT_CACHE_PREFIX = 'quarry:search:';

export class RedisResultCache implements ResultCache {
  readonly enabled = true;
  private readonly client: Redis;

  constructor(
    url: string,
    private readonly ttlMs: number,
    private readonly prefix = DEFAULT_CACHE_PREFIX,
    private readonly health: RedisHealthSink = { lost: () => undefined, regained: () => undefined },
    commandTimeoutMs = 250,
  ) {
    this.client = new Redis(url, {
      commandTimeout: commandTimeoutMs,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: 1_000,
      retryStrategy: (times: number) => Math.min(times * 100, 1_000),
    });
    this.client.on('error', (error: Error) => this.health.lost(error));
    this.client.on('ready', () => this.health.regained());
  }

  /** Resolves once connected (commands sent before are misses: nothing waits for Redis). */
  ready(): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => this.client.once('ready', () => resolve()));
  }

  async get(key: string): Promise<string | null> {
    try {
      return await this.client.get(`${this.prefix}r:${key}`);
    } catch {
      return null;
    }
  }

  async set(key: string, value: string, databaseIds: string[]): Promise<void> {
    const entry = `${this.prefix}r:${key}`;
    try {
      const multi = this.client.multi().set(entry, value, 'PX', this.ttlMs);
      for (const id of databaseIds) {
        multi.sadd(`${this.prefix}db:${id}`, entry).pexpire(`${this.prefix}db:${id}`, this.ttlMs * 2);
      }
      await multi.exec();
    } catch {
      // a cache that cannot be written is only slower
    }
  }

  async forgetDatabase(databaseId: string): Promise<void> {
    const set = `${this.prefix}db:${databaseId}`;
    try {
      const entries = await this.client.smembers(set);
      await this.client.del(set, ...entries);
    } catch (error) {
      this.health.lost(error);
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}
