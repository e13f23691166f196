/**
 * What a publishable key reaches, as the services that take a key caller apply it: the databases and tables a
 * search with it reads, and how much one visitor may use it. Publishable keys themselves are
 * src/services/keys/publishable-keys.ts.
 */
import { AppError } from '../errors/app-error.js';
import { limitsForTier, type CustomLimits } from '../rate-limit/index.js';
import type { ApiKeyRecord } from '../repositories/api-key-repository.js';

/** Requests one client IP may make with a publishable key per hour: its own setting, else a tenth of its tier's. */
export function requestsPerIp(key: Pick<ApiKeyRecord, 'tier' | 'customLimits' | 'requestsPerIpPerHour'>): number {
  if (key.requestsPerIpPerHour) return key.requestsPerIpPerHour;
  return Math.max(1, Math.floor(limitsForTier(key.tier, key.customLimits as CustomLimits | null).requestsPerHour / 10));
}

const outsideScope = (what: 'database' | 'table', name: string, allowed: string[]) =>
  new AppError('INSUFFICIENT_PERMISSIONS', `This publishable key may not search the ${what} ${name}; it may search ${allowed.join(', ')}.`, {
    required: `${what}:${name}`, granted: allowed,
  });

/**
 * What a search with `key` reads. A secret key: what the request names (empty: every connection of its
 * environment). A publishable key: only its own databases and, when it names tables, only those; a request may
 * narrow them and naming another is 403. `keyDefault` says the databases are the key's own list, not the request's,
 * so one since deleted is skipped rather than reported missing.
 */
export function searchScope(key: ApiKeyRecord, request: { databases?: string[]; tables?: string[] }): { databases: string[]; keyDefault: boolean; tables?: string[] } {
  const databases = request.databases ?? [];
  if (key.kind !== 'publishable') return { databases, keyDefault: false, tables: request.tables };
  const ownDatabases = key.databaseIds ?? [];
  for (const id of databases) if (!ownDatabases.includes(id)) throw outsideScope('database', id, ownDatabases);
  const ownTables = key.tableNames ?? [];
  const tables = request.tables ?? [];
  if (ownTables.length > 0) for (const table of tables) if (!ownTables.includes(table)) throw outsideScope('table', table, ownTables);
  return {
    databases: databases.length > 0 ? databases : ownDatabases,
    keyDefault: databases.length === 0,
    tables: tables.length > 0 ? tables : ownTables.length > 0 ? ownTables : undefined,
  };
}
