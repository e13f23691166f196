import type { TierName } from '../rate-limit/index.js';

const MiB = 1024 * 1024;

/**
 * What each plan allows beyond the spec's tier table (src/rate-limit/tiers.ts), documented in openapi.yaml:
 * - `databasesPerSearch`: connections one search reads (searchDatabases); naming more is 403 TOO_MANY_DATABASES, and a
 *   search naming none reads this many of the key's environment, the most recently connected first.
 * - `sqliteFileBytes`: the largest SQLite file one upload may be (uploadSqliteFile, 413 beyond it);
 *   `sqliteFolderBytes`: all of the account's SQLite files together.
 */
export interface PlanLimits {
  databasesPerSearch: number;
  sqliteFileBytes: number;
  sqliteFolderBytes: number;
}

export const PLAN_LIMITS: Readonly<Record<TierName, Readonly<PlanLimits>>> = Object.freeze({
  free: Object.freeze({ databasesPerSearch: 3, sqliteFileBytes: 50 * MiB, sqliteFolderBytes: 150 * MiB }),
  pro: Object.freeze({ databasesPerSearch: 10, sqliteFileBytes: 500 * MiB, sqliteFolderBytes: 5 * 1024 * MiB }),
  enterprise: Object.freeze({ databasesPerSearch: 25, sqliteFileBytes: 5 * 1024 * MiB, sqliteFolderBytes: 50 * 1024 * MiB }),
});

/**
 * Rows of one table the search index holds, by the owner's plan. Rows past the limit, in primary key order,
 * are left out and the table says so (`truncated`).
 */
export const INDEX_ROWS_PER_TABLE: Readonly<Record<TierName, number>> = Object.freeze({
  free: 10_000,
  pro: 100_000,
  enterprise: 1_000_000,
});
