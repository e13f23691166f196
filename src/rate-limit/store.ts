/**
 * The one interface the rest of Quarry uses to limit requests, whatever holds the counts. Implementations: memory
 * (one process, exact), Redis (many processes, exact, one atomic script per decision) and resilient (Redis with a
 * memory fallback). `nowMs` is always passed in, so tests move a clock instead of sleeping.
 *
 * The memory and resilient stores never reject; the raw Redis store rejects on Redis errors, which is why the
 * service only ever gets it wrapped in the resilient store (see index.ts).
 */
import type { RateLimitDecision } from './decision.js';
import type { RateLimitRule } from './rules.js';

export interface StoreStatus {
  /** Where decisions are being made right now. */
  mode: 'redis' | 'memory';
  redisUp: boolean;
  lastError: string | null;
}

/** One limit a request is counted against: a subject and the rule it is held to. */
export interface LimitCheck {
  subject: string;
  rule: RateLimitRule;
}

/** The answer to `consumeAll`: admitted only when every check admits. */
export interface CombinedDecision {
  allowed: boolean;
  /**
   * Each check's own verdict, in the order given. When the request was refused, a check that had room reports
   * itself admissible at its current count (as `peek` would): nothing was recorded in it.
   */
  decisions: RateLimitDecision[];
  /** The first check (index) that refused, null when admitted. */
  refusedBy: number | null;
}

export interface RateLimitStore {
  /** Decides one request for `subject` and records it when admitted (or starts a block when it crosses a limit). */
  consume(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision>;
  /**
   * Decides one request against several limits at once, atomically: it is admitted only when every check has
   * room, and then recorded in all of them; otherwise in none. A check that is itself full starts its own block,
   * exactly as `consume` would. Subjects must be distinct; in Redis they must share one hash tag (`{account:<id>}`),
   * so one script can decide them and a Cluster keeps them in one slot.
   */
  consumeAll(checks: readonly LimitCheck[], nowMs: number): Promise<CombinedDecision>;
  /**
   * The subject's state now, for the status endpoint: whether a request would be admitted, and if not why and for
   * how long, exactly as `consume` would say, but nothing is recorded and no block starts. `used` and `remaining`
   * are the current counts (not counting a hypothetical request).
   */
  peek(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision>;
  /**
   * Takes back one request `consume` recorded for `subject` at `atMs` (the same `nowMs`), for an operation whose
   * refused requests do not count (`x-quarry-rate-limit` `uncounted`). A block it started stays.
   */
  refund(subject: string, atMs: number): Promise<void>;
  /**
   * Takes one of `max` concurrent slots for `leaseId` until `nowMs + leaseTtlMs`; false when all are taken.
   * Re-acquiring a held lease renews it. Leases expire, so a process that dies holding one cannot leak it.
   * `max` is finite: for an unlimited tier (concurrentConnections null) callers do not acquire at all.
   */
  acquireConcurrency(
    subject: string, max: number, leaseId: string, nowMs: number, leaseTtlMs: number,
  ): Promise<boolean>;
  releaseConcurrency(subject: string, leaseId: string): Promise<void>;
  /** True when the store answers (the Redis store rejects instead; the resilient store turns that into false). */
  ping(): Promise<boolean>;
  status(): StoreStatus;
  close(): Promise<void>;
}
