/**
 * Keeps rate limiting answering when Redis does not (a Redis error never becomes a 429 or a 500).
 *
 * Policy: fail open to per-process limits. A Redis call that errors or takes longer than `timeoutMs` is answered
 * by an in-memory store instead, and the store switches to memory mode. While in memory mode no request waits on
 * Redis: at most once per `retryIntervalMs` a background ping checks whether it answers again, and the first
 * successful ping switches back. `onError` is called once per outage, not once per request; `status()` feeds the
 * health endpoint. Counts made in memory during an outage are not copied to Redis.
 */
import type { RateLimitDecision } from './decision.js';
import { MemoryStore } from './memory-store.js';
import { assertOneHashTag } from './redis-store.js';
import type { RateLimitRule } from './rules.js';
import type { CombinedDecision, LimitCheck, RateLimitStore, StoreStatus } from './store.js';
import { TimeoutError, withTimeout } from '../lib/timeout.js';

export interface ResilientStoreOptions {
  primary: RateLimitStore;
  fallback?: RateLimitStore;
  timeoutMs?: number;
  retryIntervalMs?: number;
  onError?: (err: Error) => void;
  onRecover?: () => void;
  /** Real time for probe scheduling (not the request clock); injectable for tests. */
  clock?: () => number;
}

export class ResilientStore implements RateLimitStore {
  private readonly primary: RateLimitStore;
  private readonly fallback: RateLimitStore;
  private readonly timeoutMs: number;
  private readonly retryIntervalMs: number;
  private readonly clock: () => number;
  private readonly onError: (err: Error) => void;
  private readonly onRecover: () => void;
  private up = true;
  private lastError: string | null = null;
  private lastProbeMs = -Infinity;
  private probing: Promise<boolean> | null = null;

  constructor(options: ResilientStoreOptions) {
    this.primary = options.primary;
    this.fallback = options.fallback ?? new MemoryStore();
    this.timeoutMs = options.timeoutMs ?? 250;
    this.retryIntervalMs = options.retryIntervalMs ?? 1_000;
    this.clock = options.clock ?? Date.now;
    this.onError = options.onError ?? (() => {});
    this.onRecover = options.onRecover ?? (() => {});
  }

  consume(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    return this.run((store) => store.consume(subject, rule, nowMs));
  }

  async consumeAll(checks: readonly LimitCheck[], nowMs: number): Promise<CombinedDecision> {
    assertOneHashTag(checks); // a caller's mistake must not pass for a Redis outage
    return this.run((store) => store.consumeAll(checks, nowMs));
  }

  peek(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    return this.run((store) => store.peek(subject, rule, nowMs));
  }

  acquireConcurrency(
    subject: string, max: number, leaseId: string, nowMs: number, leaseTtlMs: number,
  ): Promise<boolean> {
    return this.run((store) => store.acquireConcurrency(subject, max, leaseId, nowMs, leaseTtlMs));
  }

  /** Releases in both stores: the lease may have been taken from either side of an outage's edge. */
  refund(subject: string, atMs: number): Promise<void> {
    return this.run((store) => store.refund(subject, atMs));
  }

  async releaseConcurrency(subject: string, leaseId: string): Promise<void> {
    await this.fallback.releaseConcurrency(subject, leaseId);
    if (!this.up) return;
    try {
      await withRedisTimeout(this.primary.releaseConcurrency(subject, leaseId), this.timeoutMs);
    } catch (err) {
      this.markDown(err); // an unreleased Redis lease expires by its TTL
    }
  }

  /** Checks Redis now and updates the status; the health endpoint calls it. Never rejects. */
  ping(): Promise<boolean> {
    this.probing ??= this.probe().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  status(): StoreStatus {
    return { mode: this.up ? 'redis' : 'memory', redisUp: this.up, lastError: this.lastError };
  }

  async close(): Promise<void> {
    await this.probing;
    await this.primary.close().catch(() => {});
    await this.fallback.close();
  }

  private async run<T>(operation: (store: RateLimitStore) => Promise<T>): Promise<T> {
    if (!this.up) {
      if (this.clock() - this.lastProbeMs >= this.retryIntervalMs) void this.ping();
      return operation(this.fallback);
    }
    try {
      return await withRedisTimeout(operation(this.primary), this.timeoutMs);
    } catch (err) {
      this.markDown(err);
      return operation(this.fallback);
    }
  }

  private async probe(): Promise<boolean> {
    this.lastProbeMs = this.clock();
    try {
      if (!(await withRedisTimeout(this.primary.ping(), this.timeoutMs))) throw new Error('Redis ping was not answered');
      this.markUp();
      return true;
    } catch (err) {
      this.markDown(err);
      return false;
    }
  }

  private markDown(err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    this.lastError = error.message;
    if (!this.up) return;
    this.up = false;
    this.lastProbeMs = this.clock();
    notify(() => this.onError(error));
  }

  private markUp(): void {
    if (this.up) return;
    this.up = true;
    notify(this.onRecover);
  }
}

/** A logging callback that throws must not turn into the exception this store exists to prevent. */
function notify(callback: () => void): void {
  try {
    callback();
  } catch {
    // ignored on purpose
  }
}

/** Redis must answer within `ms`, or the decision falls back to memory. */
function withRedisTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withTimeout(promise, ms, { error: () => new TimeoutError(`Redis did not answer within ${ms} ms`) });
}
