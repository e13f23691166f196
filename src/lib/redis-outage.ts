import type { Logger } from './logger.js';

/**
 * One story per Redis outage in the log: the rate limiter, the invalidation channel and the search
 * cache each use their own connections to Redis, and each noticed (and logged) every failed command and reconnect:
 * 174 warnings in 10 seconds. Each reports here when it loses and regains Redis; the outage is logged once when
 * the first loses it and once when the last regains it.
 */
export class RedisOutageLog {
  private readonly down = new Map<string, string>();

  constructor(private readonly logger: Pick<Logger, 'warn'>) {}

  /** `source` cannot reach Redis. */
  lost(source: string, error: unknown): void {
    if (this.down.has(source)) return;
    const first = this.down.size === 0;
    this.down.set(source, error instanceof Error ? error.message : String(error));
    if (first) this.logger.warn({ source, reason: this.down.get(source) }, 'redis unreachable: rate limits fall back to this process, search results are not cached, cache invalidations reach this process only');
  }

  /** `source` reaches Redis again. */
  regained(source: string): void {
    if (!this.down.delete(source) || this.down.size > 0) return;
    this.logger.warn({ source }, 'redis reachable again: rate limits are shared, caches and invalidations work again');
  }

  /** Sources that cannot reach Redis right now. */
  get unreachable(): string[] {
    return [...this.down.keys()];
  }
}
