/**
 * Which tables of one database a search reads, and through which index: the request's `tables` and `columns` filters
 * applied to the discovered schema.
 *
 * - A table is searched through the full-text index that covers the most of its (selected) text columns. On
 *   PostgreSQL and MySQL an index is usable only when all of its columns are selected (MATCH must name exactly the
 *   index's columns; a combined tsvector cannot be split); FTS5 restricts any index to the selected columns itself.
 * - Otherwise the table is searched by the bounded LIKE fallback (sql-like.ts) over its selected text columns.
 * - An external-content FTS5 table is searched as its content table; it is searched itself only when the content table
 *   is not (filtered out or not exposed).
 * - Rows need an identity: the primary key, else PostgreSQL's ctid or SQLite's rowid. MySQL tables without a primary
 *   key are skipped.
 * - At most MAX_TABLES_PER_DATABASE tables per database, in the schema's order.
 */
import type { FullTextIndexInfo, TableSchema } from '../connectors/index.js';
import type { SearchSchema } from './schema-catalog.js';
import type { KeyColumn, SearchTarget } from './types.js';

export const MAX_TABLES_PER_DATABASE = 50;

export interface TargetFilters {
  tables?: string[] | null;
  columns?: string[] | null;
}

/** `table` is one of `names`, by its bare name or as `schema.table` (how a request's `tables` name tables). */
export function named(table: Pick<TableSchema, 'name' | 'schema'>, names: string[]): boolean {
  return names.includes(table.name) || (table.schema !== null && names.includes(`${table.schema}.${table.name}`));
}

function indexesOf(schema: SearchSchema, table: TableSchema): FullTextIndexInfo[] {
  return schema.fullTextIndexes.filter((i) => i.table === table.name && (i.schema ?? null) === (table.schema ?? null));
}

function keysOf(schema: SearchSchema, table: TableSchema): KeyColumn[] | null {
  if (table.primaryKey.length > 0) {
    return table.primaryKey.map((name) => ({ name, pseudo: schema.engine === 'sqlite' && name === 'rowid' && !table.columns.some((c) => c.name === 'rowid') }));
  }
  if (schema.engine === 'postgres') return [{ name: 'ctid', pseudo: true }];
  if (schema.engine === 'sqlite') return [{ name: 'rowid', pseudo: true }];
  return null;
}

export function chooseTargets(schema: SearchSchema, filters: TargetFilters): SearchTarget[] {
  const tableFilter = filters.tables && filters.tables.length > 0 ? filters.tables : null;
  const columnFilter = filters.columns && filters.columns.length > 0 ? filters.columns : null;
  const candidates = schema.tables.filter((t) => !tableFilter || named(t, tableFilter));
  const candidateNames = new Set(candidates.map((t) => t.name.toLowerCase()));
  const targets: SearchTarget[] = [];

  for (const table of candidates) {
    if (targets.length >= MAX_TABLES_PER_DATABASE) break;
    const indexes = indexesOf(schema, table);
    const own = indexes.find((i) => i.kind === 'fts5' && i.ftsTable === table.name);
    // An external-content FTS5 table whose content table is searched anyway.
    if (own?.contentTable && candidateNames.has(own.contentTable.toLowerCase())) continue;
    const keys = keysOf(schema, table);
    if (!keys) continue;
    const selected = table.textColumns.filter((c) => !columnFilter || columnFilter.includes(c));
    if (selected.length === 0) continue;

    const usable = indexes
      .map((index) => ({ index, covered: index.columns.filter((c) => selected.includes(c)) }))
      .filter(({ index, covered }) =>
        covered.length > 0 && (index.kind === 'fts5' || covered.length === index.columns.length))
      .sort((a, b) => b.covered.length - a.covered.length || preferOwn(b.index, table) - preferOwn(a.index, table));
    const chosen = usable[0] ?? null;
    const index = chosen?.index ?? null;
    const external = index?.kind === 'fts5' && index.ftsTable !== table.name;
    const searchColumns = chosen
      ? (index!.kind === 'gin_tsvector' ? headlineColumns(chosen.covered, table) : chosen.covered)
      : selected;
    targets.push({
      engine: schema.engine,
      table: table.name,
      schema: table.schema ?? null,
      columns: table.columns.filter((c) => c.type !== 'tsvector').map((c) => c.name),
      columnTypes: table.columns.filter((c) => c.type !== 'tsvector').map((c) => c.type),
      keys: external ? [{ name: index!.contentRowid ?? 'rowid', pseudo: (index!.contentRowid ?? 'rowid') === 'rowid' }] : keys,
      searchColumns,
      index,
      ftsColumns: index?.ftsTable ? (schema.ftsColumns[index.ftsTable] ?? null) : null,
      rowEstimate: table.rowEstimate,
    });
  }
  return targets;
}

/** An own-content FTS5 index before an external one of the same size. */
function preferOwn(index: FullTextIndexInfo, table: TableSchema): number {
  return index.ftsTable === table.name ? 1 : 0;
}

/** A tsvector column index reports its source columns; when they are unknown, headline the table's text columns. */
function headlineColumns(covered: string[], table: TableSchema): string[] {
  const text = covered.filter((c) => table.textColumns.includes(c));
  return text.length > 0 ? text : table.textColumns;
}
