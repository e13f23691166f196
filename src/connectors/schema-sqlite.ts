/**
 * SQLite schema discovery: ordinary tables and FTS5 virtual tables of the main database (shadow tables of virtual
 * tables and other virtual table kinds are skipped). Searchable columns are those with TEXT affinity; an FTS5 table
 * is reported as a table whose own index is kind `fts5`, and its external content table (`content=`) gets the same
 * index. Row estimates come from sqlite_stat1 when ANALYZE ran, else a count capped at ROW_COUNT_CAP.
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
import { quoteSqliteIdent } from './sqlite.js';
import type { SqlExecutor, TableSchema } from './types.js';

export const ROW_COUNT_CAP = 100_000;

const SHADOW_SUFFIXES = ['data', 'idx', 'content', 'docsize', 'config', 'segments', 'segdir', 'stat', 'node', 'parent', 'rowid'];

const MASTER_SQL = `
SELECT name, sql FROM sqlite_master
WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY name`;
// hidden: 0 normal, 1 hidden virtual-table column, 2/3 generated columns.
const COLUMNS_SQL = 'SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid';
const HAS_STAT1_SQL = "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'";
const STAT1_SQL = 'SELECT tbl, stat FROM sqlite_stat1';

interface MasterRow { name: string; sql: string | null }
interface ColumnRow { name: string; type: string; pk: number }

/** SQLite's type affinity rules (datatype3.html, section 3.1). */
export function sqliteAffinity(declared: string): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t === '' || t.includes('BLOB')) return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

function unquote(token: string): string {
  const t = token.trim();
  const q = t[0];
  if ((q === "'" || q === '"' || q === '`') && t.endsWith(q) && t.length >= 2) return t.slice(1, -1).split(q + q).join(q);
  if (q === '[' && t.endsWith(']')) return t.slice(1, -1);
  return t;
}

function splitArgs(args: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (const c of args) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  if (current.trim()) parts.push(current);
  return parts.map((p) => p.trim()).filter(Boolean);
}

export interface Fts5Definition {
  columns: Array<{ name: string; indexed: boolean }>;
  /** null: the FTS table stores its own content; '' : contentless. */
  content: string | null;
  contentRowid: string;
}

/** Parses `CREATE VIRTUAL TABLE x USING fts5(a, b UNINDEXED, content='t', content_rowid='id')`; null if not FTS5. */
export function parseFts5(sql: string): Fts5Definition | null {
  const match = /\busing\s+fts5\s*\(([\s\S]*)\)\s*;?\s*$/i.exec(sql);
  if (!match) return null;
  const definition: Fts5Definition = { columns: [], content: null, contentRowid: 'rowid' };
  for (const arg of splitArgs(match[1] ?? '')) {
    const option = /^([A-Za-z_]+)\s*=\s*([\s\S]*)$/.exec(arg);
    if (option?.[1] && option[2] !== undefined) {
      const key = option[1].toLowerCase();
      if (key === 'content') definition.content = unquote(option[2]);
      if (key === 'content_rowid') definition.contentRowid = unquote(option[2]);
      continue;
    }
    const column = /^("(?:[^"]|"")+"|`[^`]+`|\[[^\]]+\]|'(?:[^']|'')+'|\S+)\s*(.*)$/.exec(arg);
    if (column?.[1]) definition.columns.push({ name: unquote(column[1]), indexed: !/\bUNINDEXED\b/i.test(column[2] ?? '') });
  }
  return definition;
}

async function rowEstimates(executor: SqlExecutor, names: string[], timeoutMs: number): Promise<Map<string, number>> {
  const q = { timeoutMs };
  const estimates = new Map<string, number>();
  if ((await executor.query(HAS_STAT1_SQL, [], q)).length > 0) {
    for (const row of await executor.query<{ tbl: string; stat: unknown }>(STAT1_SQL, [], q)) {
      const rows = toInt(toText(row.stat).split(' ')[0]);
      estimates.set(row.tbl, Math.max(estimates.get(row.tbl) ?? 0, rows));
    }
  }
  for (const name of names.filter((n) => !estimates.has(n))) {
    const sql = `SELECT count(*) AS n FROM (SELECT 1 FROM ${quoteSqliteIdent(name)} LIMIT ${ROW_COUNT_CAP})`;
    const [row] = await executor.query<{ n: unknown }>(sql, [], q);
    estimates.set(name, toInt(row?.n));
  }
  return estimates;
}

export async function discoverSqliteSchema(
  executor: SqlExecutor,
  allow: AllowList | null,
  timeoutMs: number,
): Promise<EngineDiscovery> {
  const q = { timeoutMs };
  const master = await executor.query<MasterRow>(MASTER_SQL, [], q);
  const virtual = master.filter((t) => /^\s*create\s+virtual\s+table/i.test(t.sql ?? ''));
  const isShadow = (name: string) =>
    virtual.some((v) => SHADOW_SUFFIXES.some((suffix) => name === `${v.name}_${suffix}`));
  const fts = new Map(virtual.flatMap((v) => {
    const parsed = parseFts5(v.sql ?? '');
    return parsed ? [[v.name, parsed] as const] : [];
  }));
  const candidates = master.filter((t) =>
    !isShadow(t.name) && (fts.has(t.name) || !virtual.includes(t)) && (!allow || allow.allows('main', t.name, 'main')));
  if (candidates.length === 0) return { tables: [], fullTextIndexes: [] };

  const estimates = await rowEstimates(executor, candidates.map((t) => t.name), timeoutMs);
  const fullTextIndexes: FullTextIndexInfo[] = [];
  const tables: TableSchema[] = [];
  for (const table of candidates) {
    const cols = await executor.query<ColumnRow>(COLUMNS_SQL, [table.name], q);
    const definition = fts.get(table.name);
    const indexedNames = definition?.columns.filter((c) => c.indexed).map((c) => c.name) ?? [];
    const searchable = definition ? indexedNames : cols.filter((c) => sqliteAffinity(c.type) === 'TEXT').map((c) => c.name);
    const indexes: FullTextIndexInfo[] = [];
    if (definition) {
      const external = definition.content ? definition.content : null;
      indexes.push(fullTextInfo({
        table: table.name, schema: null, name: table.name, kind: 'fts5', columns: indexedNames,
        ftsTable: table.name, contentTable: external, contentRowid: external ? definition.contentRowid : null,
      }));
    }
    // External-content FTS5 tables over this table index it too.
    for (const [ftsName, def] of fts) {
      if (!def.content || def.content.toLowerCase() !== table.name.toLowerCase()) continue;
      const covered = def.columns.filter((c) => c.indexed && cols.some((col) => col.name === c.name)).map((c) => c.name);
      indexes.push(fullTextInfo({
        table: table.name, schema: null, name: ftsName, kind: 'fts5', columns: covered,
        ftsTable: ftsName, contentTable: table.name, contentRowid: def.contentRowid,
      }));
    }
    fullTextIndexes.push(...indexes);
    tables.push({
      name: table.name,
      schema: null,
      primaryKey: definition ? ['rowid'] : cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name),
      rowEstimate: estimates.get(table.name) ?? 0,
      columns: cols.map((c) => ({ name: c.name, type: definition ? 'TEXT' : c.type, searchable: searchable.includes(c.name) })),
      textColumns: searchable,
      fullTextIndexes: indexes.map(wireIndex),
    });
  }
  return { tables, fullTextIndexes };
}
