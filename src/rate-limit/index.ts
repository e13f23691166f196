/**
 * Quarry's rate limiter (spec: Limits). Framework-free: the HTTP layer turns decisions into headers and
 * 429s; this folder only decides.
 */
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import { ResilientStore } from './resilient-store.js';
import type { RateLimitStore } from './store.js';

export * from './decision.js';
export * from './memory-store.js';
export * from './operation-limits.js';
export * from './redis-store.js';
export * from './resilient-store.js';
export * from './rules.js';
export * from './store.js';
export * from './tiers.js';

export interface CreateRateLimitStoreOptions {
  /** When unset, limits are kept in this process's memory. */
  redisUrl?: string;
  /** Key prefix in Redis; default `quarry:rl:`. */
  prefix?: string;
  /** Called once when Redis becomes unreachable (then decisions fall back to memory). */
  onError?: (err: Error) => void;
  /** Called when Redis answers again after an outage. */
  onRecover?: () => void;
  /** How long a decision may wait for Redis before falling back; default 250 ms. */
  timeoutMs?: number;
}

/** The store the service uses: memory without REDIS_URL, else Redis with a memory fallback (see resilient-store.ts). */
export function createRateLimitStore(options: CreateRateLimitStoreOptions = {}): RateLimitStore {
  if (!options.redisUrl) return new MemoryStore();
  const timeoutMs = options.timeoutMs ?? 250;
  const primary = new RedisStore({ url: options.redisUrl, prefix: options.prefix, commandTimeoutMs: timeoutMs });
  return new ResilientStore({ primary, timeoutMs, onError: options.onError, onRecover: options.onRecover });
}
