/**
 * PostgreSQL schema discovery from the catalogs: base and partitioned tables the user may SELECT from, in `public`
 * (plus schemas the allow-list names as `schema.table`), their columns, primary keys, reltuples estimates and GIN
 * indexes over tsvector expressions or tsvector columns.
 */
import {
  columnsInExpression,
  fullTextInfo,
  toInt,
  toText,
  wireIndex,
  type AllowList,
  type EngineDiscovery,
  type FullTextIndexInfo,
} from './schema-common.js';
import type { SqlExecutor, TableSchema } from './types.js';

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'pg_toast']);
const DEFAULT_SCHEMA = 'public';

const TABLES_SQL = `
SELECT c.oid::text AS oid, n.nspname AS schema, c.relname AS name,
       CASE WHEN c.relkind = 'p' THEN
              (SELECT COALESCE(SUM(GREATEST(p.reltuples, 0)), 0) FROM pg_catalog.pg_inherits i
                 JOIN pg_catalog.pg_class p ON p.oid = i.inhrelid WHERE i.inhparent = c.oid)
            ELSE GREATEST(c.reltuples, 0) END::float8 AS estimate
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname = ANY($1::text[])
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname`;

const COLUMNS_SQL = `
SELECT a.attrelid::text AS oid, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
       COALESCE(bt.typcategory, t.typcategory) AS category, COALESCE(bt.typname, t.typname) AS base_type,
       CASE WHEN COALESCE(bt.typname, t.typname) = 'tsvector' THEN pg_get_expr(d.adbin, d.adrelid) END AS generated
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`;

const PRIMARY_KEYS_SQL = `
SELECT i.indrelid::text AS oid, a.attname AS name
FROM pg_catalog.pg_index i
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indisprimary AND i.indrelid = ANY($1::oid[])
ORDER BY i.indrelid, k.ord`;

// One row per key of each valid, non-partial GIN index; `definition` is that key's expression or column.
const GIN_KEYS_SQL = `
SELECT i.indrelid::text AS oid, ic.relname AS name, k.attnum AS attnum, a.attname AS column_name,
       pg_get_indexdef(i.indexrelid, k.ord::int, false) AS definition
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_am am ON am.oid = ic.relam
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_catalog.pg_attribute a ON k.attnum > 0 AND a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE am.amname = 'gin' AND i.indisvalid AND i.indpred IS NULL AND i.indrelid = ANY($1::oid[])
ORDER BY i.indrelid, ic.relname, k.ord`;

interface TableRow { oid: string; schema: string; name: string; estimate: number | string }
interface ColumnRow { oid: string; name: string; type: string; category: string; base_type: string; generated: string | null }
interface KeyRow { oid: string; name: string }
interface GinKeyRow { oid: string; name: string; attnum: number; column_name: string | null; definition: string }

function languageOf(expression: string): string | null {
  return /to_tsvector\s*\(\s*'((?:[^']|'')+)'::regconfig/i.exec(expression)?.[1]?.replace(/''/g, "'") ?? null;
}

function isSearchable(column: ColumnRow): boolean {
  return column.category === 'S' && column.base_type !== 'name';
}

export async function discoverPostgresSchema(
  executor: SqlExecutor,
  allow: AllowList | null,
  timeoutMs: number,
): Promise<EngineDiscovery> {
  const q = { timeoutMs };
  const schemas = [DEFAULT_SCHEMA, ...(allow?.schemas() ?? [])].filter((s) => !SYSTEM_SCHEMAS.has(s) && !s.startsWith('pg_temp'));
  const tables = (await executor.query<TableRow>(TABLES_SQL, [schemas], q)).filter((t) =>
    allow ? allow.allows(t.schema, t.name, DEFAULT_SCHEMA) : t.schema === DEFAULT_SCHEMA,
  );
  if (tables.length === 0) return { tables: [], fullTextIndexes: [] };
  const oids = tables.map((t) => t.oid);
  const [columns, keys, ginKeys] = await Promise.all([
    executor.query<ColumnRow>(COLUMNS_SQL, [oids], q),
    executor.query<KeyRow>(PRIMARY_KEYS_SQL, [oids], q),
    executor.query<GinKeyRow>(GIN_KEYS_SQL, [oids], q),
  ]);

  const fullTextIndexes: FullTextIndexInfo[] = [];
  const result: TableSchema[] = tables.map((table) => {
    const cols = columns.filter((c) => c.oid === table.oid);
    const names = cols.map((c) => c.name);
    const indexes = ginKeys
      .filter((k) => k.oid === table.oid)
      .flatMap((k): FullTextIndexInfo[] => {
        const base = { table: table.name, schema: table.schema, name: k.name, kind: 'gin_tsvector' as const };
        if (k.attnum === 0 && /\bto_tsvector\s*\(/i.test(k.definition)) {
          const covered = columnsInExpression(k.definition, names);
          return [fullTextInfo({ ...base, columns: covered, expression: k.definition, language: languageOf(k.definition) })];
        }
        const column = cols.find((c) => c.name === k.column_name);
        if (!column || column.base_type !== 'tsvector') return [];
        // A generated tsvector column: report the text columns it is built from.
        const generated = toText(column.generated);
        const sources = generated ? columnsInExpression(generated, names).filter((n) => n !== column.name) : [];
        return [
          fullTextInfo({
            ...base,
            columns: sources.length > 0 ? sources : [column.name],
            expression: `"${column.name.replace(/"/g, '""')}"`,
            language: generated ? languageOf(generated) : null,
          }),
        ];
      });
    fullTextIndexes.push(...indexes);
    const searchable = cols.filter(isSearchable).map((c) => c.name);
    return {
      name: table.name,
      schema: table.schema,
      primaryKey: keys.filter((k) => k.oid === table.oid).map((k) => k.name),
      rowEstimate: toInt(table.estimate),
      columns: cols.map((c) => ({ name: c.name, type: c.type, searchable: searchable.includes(c.name) })),
      textColumns: searchable,
      fullTextIndexes: indexes.map(wireIndex),
    };
  });
  return { tables: result, fullTextIndexes };
}
