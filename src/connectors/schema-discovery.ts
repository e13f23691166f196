/**
 * getDatabaseSchema: what a connected database offers to search. `tables` has exactly the contract's TableSchema
 * shape; `fullTextIndexes` carries what the search layer needs beyond it to use an index (the exact tsvector
 * expression the planner must see, the FTS5 table and its external content table).
 */
import { discoverMysqlSchema } from './schema-mysql.js';
import { discoverPostgresSchema } from './schema-postgres.js';
import { discoverSqliteSchema } from './schema-sqlite.js';
import { AllowList, type FullTextIndexInfo } from './schema-common.js';
import type { Engine, SqlExecutor, TableSchema } from './types.js';

export { AllowList, columnsInExpression, type FullTextIndexInfo, type FullTextKind } from './schema-common.js';

export interface DiscoveredSchema {
  engine: Engine;
  tables: TableSchema[];
  fullTextIndexes: FullTextIndexInfo[];
}

export interface DiscoveryOptions {
  /** The connection's allow-list (`table` or `schema.table`); null (or empty) exposes every readable table. */
  tables: string[] | null;
  /** Limit per catalog query (default 10 s). */
  timeoutMs?: number;
}

export const DEFAULT_DISCOVERY_TIMEOUT_MS = 10_000;

/** Discovers tables, columns, primary keys, row estimates and full-text indexes, by the executor's engine. */
export async function discoverSchema(executor: SqlExecutor, options: DiscoveryOptions): Promise<DiscoveredSchema> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS;
  const allow = options.tables && options.tables.length > 0 ? new AllowList(options.tables) : null;
  const discovered =
    executor.engine === 'postgres'
      ? await discoverPostgresSchema(executor, allow, timeoutMs)
      : executor.engine === 'mysql'
        ? await discoverMysqlSchema(executor, allow, timeoutMs)
        : await discoverSqliteSchema(executor, allow, timeoutMs);
  return { engine: executor.engine, ...discovered };
}
