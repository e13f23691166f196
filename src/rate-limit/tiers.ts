/**
 * The tier table of the specification (Limits > Tiers). Every other part of the rate limiter reads limits from
 * here, so a change of the table is a change of this one file.
 */

export type TierName = 'free' | 'pro' | 'enterprise';

export interface TierLimits {
  requestsPerHour: number;
  /** At most this many requests in any 60 seconds (see `BURST_WINDOW_SECONDS` in rules.ts). */
  burstLimit: number;
  /** How long a key stays blocked after crossing either limit. */
  blockSeconds: number;
  /** null = unlimited (the spec's "custom" row). */
  concurrentConnections: number | null;
  aiRequestsPerHour: number;
  /** null = unlimited (enterprise). */
  databases: number | null;
}

/**
 * Limits negotiated for one key. Any field left out keeps the tier's value, except the two the spec's "custom" row
 * fixes: the block lasts 30 seconds and concurrent connections are unlimited unless the key says otherwise.
 */
export interface CustomLimits {
  requestsPerHour?: number;
  burstLimit?: number;
  concurrentConnections?: number | null;
  aiRequestsPerHour?: number;
  databases?: number | null;
}

export const CUSTOM_BLOCK_SECONDS = 30;

export const TIERS: Readonly<Record<TierName, Readonly<TierLimits>>> = Object.freeze({
  free: Object.freeze({
    requestsPerHour: 1_000,
    burstLimit: 50,
    blockSeconds: 300,
    concurrentConnections: 3,
    aiRequestsPerHour: 100,
    databases: 3,
  }),
  pro: Object.freeze({
    requestsPerHour: 10_000,
    burstLimit: 200,
    blockSeconds: 300,
    concurrentConnections: 10,
    aiRequestsPerHour: 2_000,
    databases: 25,
  }),
  enterprise: Object.freeze({
    requestsPerHour: 100_000,
    burstLimit: 500,
    blockSeconds: 60,
    concurrentConnections: 50,
    aiRequestsPerHour: 20_000,
    databases: null,
  }),
});

export function isTierName(value: unknown): value is TierName {
  return value === 'free' || value === 'pro' || value === 'enterprise';
}

/** The limits that apply to a key of `tier`, with the key's own custom limits (if any) laid over them. */
export function limitsForTier(tier: TierName, custom?: CustomLimits | null): TierLimits {
  const base = TIERS[tier];
  if (!custom) return { ...base };
  return {
    requestsPerHour: custom.requestsPerHour ?? base.requestsPerHour,
    burstLimit: custom.burstLimit ?? base.burstLimit,
    blockSeconds: CUSTOM_BLOCK_SECONDS,
    // `in` rather than `??`: an explicit null (unlimited) must win over the default.
    concurrentConnections: 'concurrentConnections' in custom ? (custom.concurrentConnections ?? null) : null,
    aiRequestsPerHour: custom.aiRequestsPerHour ?? base.aiRequestsPerHour,
    databases: 'databases' in custom ? (custom.databases ?? null) : base.databases,
  };
}
