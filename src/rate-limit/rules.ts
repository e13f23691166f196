/**
 * A rule is what a store enforces for one subject: an exact sliding window plus a burst window, and what happens
 * when either is full. Tier limits, AI limits and per-operation limits (spec: Limits > Rules) all reduce to it.
 */
import type { TierLimits } from './tiers.js';

/** Spec, Limits > Rules 1: the sliding window is one hour (X-RateLimit-Window: 3600). */
export const WINDOW_SECONDS = 3600;
/** The spec names a burst limit but not its window; Quarry reads it as "at most burstLimit in any 60 seconds". */
export const BURST_WINDOW_SECONDS = 60;

export interface RateLimitRule {
  /** Requests admitted in any `windowSeconds`. */
  limit: number;
  windowSeconds: number;
  /** Requests admitted in any `burstWindowSeconds`; equal to `limit` when there is no separate burst limit. */
  burstLimit: number;
  burstWindowSeconds: number;
  /**
   * Seconds the subject stays blocked after a request would exceed either window. 0 means no block: requests are
   * refused only while a window is full, and Retry-After says when a slot frees.
   */
  blockSeconds: number;
}

/** The per-key request limit of a tier (or custom limits). */
export function requestRule(limits: TierLimits): RateLimitRule {
  return {
    limit: limits.requestsPerHour,
    windowSeconds: WINDOW_SECONDS,
    burstLimit: limits.burstLimit,
    burstWindowSeconds: BURST_WINDOW_SECONDS,
    blockSeconds: limits.blockSeconds,
  };
}

/** AI (semantic) requests per hour: a second, independent window; no burst limit and no block beyond a full window. */
export function aiRule(limits: TierLimits): RateLimitRule {
  return perHourRule(limits.aiRequestsPerHour);
}

/** A plain "n per hour" limit that refuses only while full (per-operation limits, AI requests). */
export function perHourRule(limit: number): RateLimitRule {
  return {
    limit,
    windowSeconds: WINDOW_SECONDS,
    burstLimit: limit,
    burstWindowSeconds: WINDOW_SECONDS,
    blockSeconds: 0,
  };
}
