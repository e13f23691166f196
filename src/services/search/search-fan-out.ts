/**
 * How many connected databases one search may read (issue 23 item 4): with no bound, one search opened a connection
 * to every database of the account at once and exhausted a shared server. A search naming more than the plan's
 * `databasesPerSearch` is 403 TOO_MANY_DATABASES; one naming none reads that many of the key's environment, the most
 * recently connected first (openapi.yaml, searchDatabases). Suggestions sample the same ones.
 */
import { AppError } from '../../errors/app-error.js';
import type { UserRecord } from '../../repositories/user-repository.js';
import { PLAN_LIMITS } from '../accounts/plan-limits.js';
import { planOfUser } from '../accounts/plan-service.js';

/** The most databases one search of this account reads. */
export function databasesPerSearch(user: Pick<UserRecord, 'plan'>): number {
  return PLAN_LIMITS[planOfUser(user)].databasesPerSearch;
}

/** Refuses a request naming more distinct databases than the account's plan lets one search read. */
export function assertFanOut(user: Pick<UserRecord, 'plan'>, ids: readonly string[], upgradeUrl: string): void {
  const limit = databasesPerSearch(user);
  const named = new Set(ids).size;
  if (named <= limit) return;
  const plan = planOfUser(user);
  throw new AppError('TOO_MANY_DATABASES', `One search on the ${plan} plan reads at most ${limit} databases; this one names ${named}. Search them in several requests, or upgrade.`, {
    plan, limit, requested: named, upgradeUrl,
  });
}

/** A search naming no database reads the first `databasesPerSearch` of `records` (listed newest first). */
export function firstDatabases<T>(user: Pick<UserRecord, 'plan'>, records: T[]): T[] {
  const limit = databasesPerSearch(user);
  return records.length > limit ? records.slice(0, limit) : records;
}
