/**
 * MySQL/MariaDB schema discovery from information_schema, limited to the connected database: base tables, columns,
 * PRIMARY KEY columns, TABLE_ROWS estimates and FULLTEXT indexes (their columns in index order, because
 * MATCH(...) must name exactly an index's column list).
 */
import {
  fullTextInfo,
  toInt,
  toText,
  wireIndex,
  type AllowList,
  type EngineDiscovery,
  type FullTextIndexInfo,
} from './schema-common.js';
import type { SqlExecutor, TableSchema } from './types.js';

const TEXT_TYPES = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext']);

const DATABASE_SQL = 'SELECT DATABASE() AS db';

const TABLES_SQL = `
SELECT TABLE_NAME AS name, TABLE_ROWS AS estimate
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'
ORDER BY TABLE_NAME`;

const COLUMNS_SQL = `
SELECT TABLE_NAME AS tableName, COLUMN_NAME AS name, COLUMN_TYPE AS type, DATA_TYPE AS dataType
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, ORDINAL_POSITION`;

const INDEX_COLUMNS_SQL = `
SELECT TABLE_NAME AS tableName, INDEX_NAME AS indexName, COLUMN_NAME AS columnName, INDEX_TYPE AS indexType
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND (INDEX_NAME = 'PRIMARY' OR INDEX_TYPE = 'FULLTEXT')
ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`;

// MariaDB's JSON is LONGTEXT plus CHECK (json_valid(`col`)); without this it would look like searchable text.
// The table is missing before MySQL 8.0.16 / MariaDB 10.2, where discovery goes on without it.
const JSON_CHECKS_SQL = `
SELECT TABLE_NAME AS tableName, CHECK_CLAUSE AS clause
FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE() AND CHECK_CLAUSE LIKE 'json\\_valid(%'`;

interface TableRow { name: unknown; estimate: unknown }
interface ColumnRow { tableName: unknown; name: unknown; type: unknown; dataType: unknown }
interface IndexColumnRow { tableName: unknown; indexName: unknown; columnName: unknown; indexType: unknown }

export async function discoverMysqlSchema(
  executor: SqlExecutor,
  allow: AllowList | null,
  timeoutMs: number,
): Promise<EngineDiscovery> {
  const q = { timeoutMs };
  const [[dbRow], tableRows] = await Promise.all([
    executor.query<{ db: unknown }>(DATABASE_SQL, [], q),
    executor.query<TableRow>(TABLES_SQL, [], q),
  ]);
  const database = toText(dbRow?.db);
  const tables = tableRows
    .map((t) => ({ name: toText(t.name), estimate: toInt(t.estimate) }))
    .filter((t) => !allow || allow.allows(database, t.name, database));
  if (tables.length === 0) return { tables: [], fullTextIndexes: [] };

  const [columnRows, indexRows, jsonChecks] = await Promise.all([
    executor.query<ColumnRow>(COLUMNS_SQL, [], q),
    executor.query<IndexColumnRow>(INDEX_COLUMNS_SQL, [], q),
    executor.query<{ tableName: unknown; clause: unknown }>(JSON_CHECKS_SQL, [], q).catch(() => []),
  ]);
  const jsonColumns = new Set(jsonChecks.map((c) => `${toText(c.tableName)}\0${toText(c.clause)}`));
  const isJson = (table: string, column: string) =>
    jsonColumns.has(`${table}\0json_valid(\`${column.replace(/`/g, '``')}\`)`);
  const columns = columnRows.map((c) => {
    const table = toText(c.tableName);
    const name = toText(c.name);
    const json = isJson(table, name);
    return { table, name, type: json ? 'json' : toText(c.type), dataType: json ? 'json' : toText(c.dataType).toLowerCase() };
  });
  const indexColumns = indexRows.map((r) => ({
    table: toText(r.tableName),
    index: toText(r.indexName),
    column: toText(r.columnName),
    type: toText(r.indexType).toUpperCase(),
  }));

  const fullTextIndexes: FullTextIndexInfo[] = [];
  const result: TableSchema[] = tables.map((table) => {
    const cols = columns.filter((c) => c.table === table.name);
    const searchable = cols.filter((c) => TEXT_TYPES.has(c.dataType)).map((c) => c.name);
    const own = indexColumns.filter((i) => i.table === table.name);
    const fulltextNames = [...new Set(own.filter((i) => i.type === 'FULLTEXT').map((i) => i.index))];
    const indexes = fulltextNames.map((name) =>
      fullTextInfo({
        table: table.name,
        schema: null,
        name,
        kind: 'mysql_fulltext',
        columns: own.filter((i) => i.index === name).map((i) => i.column),
      }),
    );
    fullTextIndexes.push(...indexes);
    return {
      name: table.name,
      schema: null,
      primaryKey: own.filter((i) => i.index === 'PRIMARY').map((i) => i.column),
      rowEstimate: table.estimate,
      columns: cols.map((c) => ({ name: c.name, type: c.type, searchable: searchable.includes(c.name) })),
      textColumns: searchable,
      fullTextIndexes: indexes.map(wireIndex),
    };
  });
  return { tables: result, fullTextIndexes };
}
