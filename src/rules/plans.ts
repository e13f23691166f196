/**
 * An account's plan as every limit reads it: the plans in order, and the plan of a user record already at hand.
 * What each plan allows is plan-limits.ts and the spec's tier table (src/rate-limit/tiers.ts).
 */
import type { TierName } from '../rate-limit/index.js';
import type { UserRecord } from '../repositories/user-repository.js';

export const PLAN_ORDER: readonly TierName[] = ['free', 'pro', 'enterprise'];

/** True when `tier` is above `plan` (a key may be at most its account's plan). */
export function isAbovePlan(tier: TierName, plan: TierName): boolean {
  return PLAN_ORDER.indexOf(tier) > PLAN_ORDER.indexOf(plan);
}

/** The plan of a user record already at hand (an authenticated caller's), read the same way planOf reads it. */
export function planOfUser(user: Pick<UserRecord, 'plan'>): TierName {
  return user.plan ?? 'free';
}
