/**
 * How many connected databases one search may read: with no bound, one search opened a connection
 * to every database of the account at once and exhausted a shared server. A search naming more than the plan's
 * `databasesPerSearch` is 403 TOO_MANY_DATABASES; one naming none reads that many of the key's environment, the most
 * recently connected first (openapi.yaml, searchDatabases). Suggestions sample the same ones.
 */
import { AppError } from '../../errors/app-error.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { UserRecord } from '../../repositories/user-repository.js';
import type { KeyCaller } from '../callers.js';
import type { DatabaseService } from '../databases/database-service.js';
import { PLAN_LIMITS } from '../../rules/plan-limits.js';
import { planOfUser } from '../../rules/plans.js';

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

export interface SelectDeps {
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  databases: Pick<DatabaseService, 'owned'>;
  /** Link given when a search names more databases than the plan allows. */
  upgradeUrl: string;
}

/**
 * The connections a search reads: the named ones (an unknown or another user's id is 404, another environment's
 * 401), or with none named those of the key's environment; at most the plan's databases per search either way.
 * `keyDefault`: the ids are a publishable key's own list, so one deleted since the key was made is left out rather
 * than failing every search. `all`: every connection of the environment is read.
 */
export async function selectConnections(
  deps: SelectDeps, caller: KeyCaller, ids: string[], keyDefault = false,
): Promise<{ records: DatabaseConnectionRecord[]; all: boolean }> {
  const environment = caller.key.environment;
  if (keyDefault || ids.length === 0) {
    const every = await deps.connections.listOwned(caller.user.id, environment);
    const own = new Set(ids);
    const records = firstDatabases(caller.user, keyDefault ? every.filter((record) => own.has(record.id)) : every);
    return { records, all: records.length === every.length };
  }
  assertFanOut(caller.user, ids, deps.upgradeUrl);
  const records: DatabaseConnectionRecord[] = [];
  for (const id of ids) {
    const record = await deps.databases.owned(caller.user.id, id);
    if (record.environment !== environment) {
      throw new AppError('KEY_ENVIRONMENT_MISMATCH', `This is a ${environment} key; database ${id} is a ${record.environment} connection.`, {
        databaseId: id, keyEnvironment: environment, databaseEnvironment: record.environment,
      });
    }
    records.push(record);
  }
  return { records, all: false };
}
