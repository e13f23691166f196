/**
 * Per-operation limits (spec: Limits > Rules 3) and the subjects they are counted under. Each operation has its own
 * subject, so a burst of logins never eats into a key's search allowance or another operation's.
 */
import { perHourRule, type RateLimitRule } from './rules.js';

export type LimitedOperation = 'register' | 'login' | 'createApiKey' | 'regenerateApiKey';

export const OPERATION_LIMITS: Readonly<Record<LimitedOperation, { perHour: number; scope: 'ip' | 'key' }>> =
  Object.freeze({
    register: { perHour: 5, scope: 'ip' },
    login: { perHour: 10, scope: 'ip' },
    createApiKey: { perHour: 20, scope: 'key' },
    regenerateApiKey: { perHour: 5, scope: 'key' },
  });

export function operationRule(operation: LimitedOperation): RateLimitRule {
  return perHourRule(OPERATION_LIMITS[operation].perHour);
}

/** `scopeId` is the client IP or the key id, as `OPERATION_LIMITS[operation].scope` says (`ip:1.2.3.4:register`). */
export function operationSubject(operation: LimitedOperation, scopeId: string): string {
  return `${OPERATION_LIMITS[operation].scope}:${scopeId}:${operation}`;
}

/**
 * Every subject one request is counted under together (its key, its account, a publishable key's visitor) carries
 * the account's hash tag, so the Redis store decides them in one script and Redis Cluster keeps them in one slot.
 */
function accountTag(accountId: string): string {
  return `{account:${accountId}}`;
}

/** The subject of an account's request limit, counted over all of its keys (its plan's requests per hour). */
export function accountSubject(accountId: string): string {
  return `${accountTag(accountId)}:requests`;
}

/** The subject of a key's request limit. */
export function keySubject(accountId: string, keyId: string): string {
  return `${accountTag(accountId)}:key:${keyId}`;
}

/** The subject of one client IP's requests with a publishable key (so one visitor cannot spend a site's allowance). */
export function visitorSubject(accountId: string, keyId: string, ip: string): string {
  return `${accountTag(accountId)}:pkip:${keyId}:${ip}`;
}

/** The subject of a key's AI-requests-per-hour limit. */
export function aiSubject(keyId: string): string {
  return `ai:${keyId}`;
}

/** The subject of a key's concurrent-connection leases. */
export function concurrencySubject(keyId: string): string {
  return `conn:${keyId}`;
}
