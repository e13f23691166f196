/**
 * What every rate-limit call answers, admitted or not. Both stores reduce their work to a `WindowOutcome` (plain
 * numbers, which is also what the Redis script returns) and share `toDecision`, so the two cannot drift in how they
 * report limits, remaining counts and Retry-After.
 */
import type { RateLimitRule } from './rules.js';

/** 'hourly' / 'burst': this request found that window full. 'blocked': the subject was already blocked. */
export type RefusalReason = 'hourly' | 'burst' | 'blocked';

export interface WindowOutcome {
  allowed: boolean;
  reason: RefusalReason | null;
  /** Requests counted in the window, including this one when admitted. */
  used: number;
  /** Timestamp of the oldest counted request, null when none. */
  oldestMs: number | null;
  blockedUntilMs: number | null;
  /** When refused: the earliest moment a request would be admitted. */
  retryAtMs: number | null;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The window's limit (X-RateLimit-Limit). */
  limit: number;
  /** Left in the window after this request; 0 whenever refused, as the spec's 429 body says. */
  remaining: number;
  /** Requests counted in the window (for the status endpoint's current.requests). */
  used: number;
  /** When the oldest counted request leaves the window, or now + window when none is counted. */
  resetAt: Date;
  /** now - window. */
  windowStart: Date;
  /**
   * Only when refused: whole seconds (rounded up) until a request would be admitted. That is the end of the block,
   * or later when the hourly window will still be full then, so a client that obeys it is not refused again.
   */
  retryAfterSeconds: number | null;
  blockedUntil: Date | null;
  reason: RefusalReason | null;
}

export function toDecision(outcome: WindowOutcome, rule: RateLimitRule, nowMs: number): RateLimitDecision {
  const windowMs = rule.windowSeconds * 1000;
  return {
    allowed: outcome.allowed,
    limit: rule.limit,
    remaining: outcome.allowed ? Math.max(0, rule.limit - outcome.used) : 0,
    used: outcome.used,
    resetAt: new Date((outcome.oldestMs ?? nowMs) + windowMs),
    windowStart: new Date(nowMs - windowMs),
    retryAfterSeconds:
      outcome.allowed || outcome.retryAtMs === null ? null : Math.max(1, Math.ceil((outcome.retryAtMs - nowMs) / 1000)),
    blockedUntil: outcome.blockedUntilMs === null ? null : new Date(outcome.blockedUntilMs),
    reason: outcome.reason,
  };
}

/** The combined answer of several checks (see `CombinedDecision` in store.ts): admitted when none refused. */
export function combine(decisions: RateLimitDecision[]): { allowed: boolean; decisions: RateLimitDecision[]; refusedBy: number | null } {
  const refusedBy = decisions.findIndex((decision) => !decision.allowed);
  return { allowed: refusedBy < 0, decisions, refusedBy: refusedBy < 0 ? null : refusedBy };
}

/** A caller's rate-limit window as reported to them (X-RateLimit-*): after an admission, or with a refusal. */
export interface RateLimitWindow {
  limit: number;
  remaining: number;
  resetAt: Date;
  /** The tier it is counted under: a key's tier, `custom`, or `anonymous` for a per-IP limit. */
  tier: string;
  windowSeconds: number;
}
