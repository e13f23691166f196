/**
 * What search needs to know about a connected database: the discovered tables plus, per full-text index, how to query
 * it (PostgreSQL's exact index expression, the FTS5 table and its content table), which the stored schema of
 * getDatabaseSchema does not keep. Discovered on first use and kept in memory per connection (SCHEMA_TTL_MS, or until
 * the connection changes).
 */
import { discoverSchema, type DiscoveredSchema, type SqlExecutor } from '../connectors/index.js';

export const SCHEMA_TTL_MS = 5 * 60_000;

export interface SearchSchema extends DiscoveredSchema {
  /** SQLite: each FTS5 table's columns in order (highlight() takes a column number). */
  ftsColumns: Record<string, string[]>;
}

const FTS_COLUMNS_SQL = 'SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid';

export async function loadSearchSchema(executor: SqlExecutor, tables: string[] | null, timeoutMs: number): Promise<SearchSchema> {
  const discovered = await discoverSchema(executor, { tables, timeoutMs });
  const ftsColumns: Record<string, string[]> = {};
  if (discovered.engine === 'sqlite') {
    const ftsTables = [...new Set(discovered.fullTextIndexes.flatMap((i) => (i.ftsTable ? [i.ftsTable] : [])))];
    for (const table of ftsTables) {
      const rows = await executor.query<{ name: string }>(FTS_COLUMNS_SQL, [table], { timeoutMs });
      ftsColumns[table] = rows.map((r) => String(r.name));
    }
  }
  return { ...discovered, ftsColumns };
}
