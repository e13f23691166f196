/**
 * What the index keeps of a source row: its stable id, primary key, text (what BM25 ranks and snippets
 * are cut from), fields (what a result shows) and hashes that let a sync skip unchanged rows. Reading the source is
 * here too: keyset pages in primary key order, so a resumed sync reads on where it stopped.
 */
import { hash as oneShotHash } from 'node:crypto';
import { boundedValue, MAX_RESULT_FIELD_CHARS, MAX_SEARCHED_TEXT_CHARS, valueBytes, type SqlExecutor, type TableSchema } from '../connectors/index.js';
import { filterValue, type IndexedColumn } from './filter-columns.js';
import type { IndexRow } from './index-store.js';

type Row = Record<string, unknown>;

/** Text a row contributes to the index; longer text is cut (a search engine indexes documents, not archives). */
export const MAX_INDEX_TEXT_CHARS = MAX_SEARCHED_TEXT_CHARS;
/** A text field longer than this is cut in the stored copy that results show. */
export const MAX_FIELD_CHARS = MAX_RESULT_FIELD_CHARS;
/** The embedding model reads about 128 word pieces and costs grow with length: a row's first 1,000 characters. */
export const MAX_EMBED_CHARS = 1000;
/** A primary key longer than this as JSON is not indexed. */
export const MAX_KEY_CHARS = 512;
/**
 * Most bytes of one source row a sync holds, after its values were cut in SQL: a wider row is skipped and counted,
 * as one tenant's row must not cost the memory every other tenant's requests need.
 */
export const MAX_ROW_BYTES = 2 * 1024 * 1024;
/** Most bytes of source rows one page holds: a page of wide rows has fewer rows. */
export const MAX_PAGE_BYTES = 32 * 1024 * 1024;

/** A value as JSON-safe scalar: bigints and dates as strings, bytes as hex. */
export function keyValue(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value.toString('hex');
  return String(value);
}

/** A column value as a result's `fields` carries it: dates as ISO text, big integers as text, bytes as base64. */
export function fieldValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (typeof value === 'string' && value.length > MAX_FIELD_CHARS) return value.slice(0, MAX_FIELD_CHARS);
  return value;
}

/** `{"id":42}`: the row's primary key column(s) and value(s), in key order. */
export function primaryKeyJson(table: Pick<TableSchema, 'primaryKey'>, row: Row): string {
  return JSON.stringify(Object.fromEntries(table.primaryKey.map((column) => [column, keyValue(row[column])])));
}

/** `schema.table` outside PostgreSQL's `public`, else the bare name (how search names tables too). */
export function tableId(table: Pick<TableSchema, 'name' | 'schema'>): string {
  return table.schema && table.schema !== 'public' ? `${table.schema}.${table.name}` : table.name;
}

/**
 * The tables a search reads, by their content: tables with text, but not an FTS5 table that indexes another table of
 * the schema (external content), whose rows are that other table's rows.
 */
export function contentTables(schema: TableSchema[]): TableSchema[] {
  const ftsOfOthers = new Set(schema.flatMap((table) => table.fullTextIndexes.filter((i) => i.kind === 'fts5' && i.name !== table.name).map((i) => i.name)));
  return schema.filter((table) => table.textColumns.length > 0 && !(!table.schema && ftsOfOthers.has(table.name)));
}

/** Why a table cannot be indexed, or null: it needs a primary key (the row reference) and text to search. */
export function indexableProblem(table: TableSchema): string | null {
  if (table.primaryKey.length === 0) return 'has no primary key, so its rows have no stable reference';
  if (table.textColumns.length === 0) return 'has no text columns to search';
  return null;
}

/** A text column's value as text (bytes are not text). */
function textOf(value: unknown): string {
  if (value === null || value === undefined || Buffer.isBuffer(value)) return '';
  return String(value);
}

/** SHA-256, in the one-shot call: a Hash object per call cost a 100,000-row sync about half a second more. */
const shortHash = (text: string): string => oneShotHash('sha256', text, 'base64url').slice(0, 22);

/** The index's id of a row: its table (`src`) and primary key, hashed into the index's safe id alphabet. */
export function rowId(src: string, pkJson: string): string {
  return shortHash(`${src}\u0000${pkJson}`);
}

/** Columns a result shows: every column but PostgreSQL tsvectors (index data, not content). */
export function fieldColumns(table: TableSchema): string[] {
  return table.columns.filter((c) => c.type !== 'tsvector').map((c) => c.name);
}

/** A heading is a line, not a document: the part of it that counts. */
export const MAX_HEADING_CHARS = 1000;

/**
 * The column whose words weigh more: a table's first text column, when it has several (a title before its body,
 * a name before its description, the order Meilisearch ranks attributes by too). A table of one text column has no
 * heading: its one column is the whole text.
 */
export function headingColumn(table: Pick<TableSchema, 'textColumns'>): string | null {
  return table.textColumns.length > 1 ? table.textColumns[0]! : null;
}

/**
 * The index row of a source row, without its vector (sync adds it for semantic tables), with the values of its
 * filterable and sortable `columns`. The hash covers which columns those are, so choosing others rewrites every row.
 */
export function indexRowOf(src: string, table: TableSchema, row: Row, columns: IndexedColumn[] = []): IndexRow | null {
  const pk = primaryKeyJson(table, row);
  if (pk.length > MAX_KEY_CHARS) return null;
  const parts: string[] = [];
  for (const column of table.textColumns) {
    const text = textOf(row[column]).trim();
    if (text) parts.push(text);
  }
  const text = parts.join('\n').slice(0, MAX_INDEX_TEXT_CHARS);
  const heading = headingColumn(table);
  const head = heading ? textOf(row[heading]).trim().slice(0, MAX_HEADING_CHARS) : '';
  const fields = JSON.stringify(Object.fromEntries(fieldColumns(table).map((c) => [c, fieldValue(row[c])])));
  const indexed = columns.map((c) => c.physical).join(',');
  const hash = shortHash(`${text}\u0000${head}\u0000${fields}\u0000${indexed}`);
  const entry: IndexRow = { rid: rowId(src, pk), src, pk, hash, thash: shortHash(text), text, head, fields };
  if (columns.length > 0) entry.filters = Object.fromEntries(columns.map((c) => [c.physical, filterValue(row[c.column], c.kind)]));
  return entry;
}

/** The text an embedding model reads for a row. */
export function embeddingText(row: Pick<IndexRow, 'text'>): string {
  return row.text.slice(0, MAX_EMBED_CHARS);
}

/** The table's name quoted for the engine, schema-qualified on PostgreSQL. */
export function qualifiedName(executor: SqlExecutor, table: TableSchema): string {
  const name = executor.quoteIdent(table.name);
  return table.schema && executor.engine === 'postgres' ? `${executor.quoteIdent(table.schema)}.${name}` : name;
}

/** `(a, b) > ($1, $2)`: rows after a cursor in primary key order (keyset paging). */
function afterCursor(executor: SqlExecutor, table: TableSchema, firstParam: number, op: '>' | '<='): string {
  const key = table.primaryKey.map((c) => executor.quoteIdent(c));
  const marks = key.map((_, i) => executor.placeholder(firstParam + i));
  return key.length === 1 ? `${key[0]} ${op} ${marks[0]}` : `(${key.join(', ')}) ${op} (${marks.join(', ')})`;
}

type Statement = { sql: string; params: unknown[] };

/**
 * The columns a sync reads, each cut in SQL to what the index keeps of it (text columns to the indexed text, the
 * others to a result's field), primary key columns as they are: they are the row's reference.
 */
export function boundedColumns(executor: SqlExecutor, table: TableSchema): Array<{ name: string; sql: string }> {
  const keys = new Set(table.primaryKey);
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  const text = new Set(table.textColumns);
  return [...new Set([...table.primaryKey, ...fieldColumns(table)])].map((name) => {
    const ref = executor.quoteIdent(name);
    if (keys.has(name)) return { name, sql: ref };
    const max = text.has(name) ? MAX_INDEX_TEXT_CHARS : MAX_FIELD_CHARS;
    return { name, sql: boundedValue(executor.engine, ref, types.get(name), max) };
  });
}

/** The bytes of a row's bounded values, in SQL. */
export function rowBytes(executor: SqlExecutor, table: TableSchema): string {
  const sizes = boundedColumns(executor, table).map((c) => valueBytes(executor.engine, c.sql));
  return sizes.length > 0 ? `(${sizes.join(' + ')})` : '0';
}

function pageOf(executor: SqlExecutor, table: TableSchema, select: string, after: unknown[] | null, limit: number, extra = ''): Statement {
  const order = table.primaryKey.map((c) => executor.quoteIdent(c)).join(', ');
  const pageSize = Math.max(1, Math.floor(limit));
  const from = qualifiedName(executor, table);
  const where = [after ? afterCursor(executor, table, 1, '>') : '', extra].filter(Boolean);
  const condition = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  return { sql: `SELECT ${select} FROM ${from}${condition} ORDER BY ${order} LIMIT ${pageSize}`, params: after ?? [] };
}

/**
 * The primary key and size in bytes (`quarry_bytes`) of up to `limit` rows after `after`, in primary key order: what a
 * sync reads first, so that it reads no more rows than fit in a page and skips a row too wide to hold. The size is
 * of the values as cut, so the engine reads each value once more but no value reaches Quarry.
 */
export function pageSizesQuery(executor: SqlExecutor, table: TableSchema, after: unknown[] | null, limit: number): Statement {
  const keys = table.primaryKey.map((c) => executor.quoteIdent(c));
  return pageOf(executor, table, `${keys.join(', ')}, ${rowBytes(executor, table)} AS quarry_bytes`, after, limit);
}

/** The primary keys alone of up to `limit` rows after `after`: no value of the row is built. */
export function pageKeysQuery(executor: SqlExecutor, table: TableSchema, after: unknown[] | null, limit: number): Statement {
  return pageOf(executor, table, table.primaryKey.map((c) => executor.quoteIdent(c)).join(', '), after, limit);
}

/**
 * One page of rows after `after` (the previous page's last primary key) up to `upTo` (the last row that fits the
 * page) in primary key order: keyset paging, so a resumed job reads on where it stopped and no page costs more than
 * its own rows. Every value is cut in SQL and a row over MAX_ROW_BYTES is left out. Identifiers come from the
 * discovered schema and are quoted by the engine; values are bound.
 */
export function pageQuery(executor: SqlExecutor, table: TableSchema, after: unknown[] | null, limit: number, upTo: unknown[] | null = null): Statement {
  const columns = boundedColumns(executor, table).map((c) => `${c.sql} AS ${executor.quoteIdent(c.name)}`).join(', ');
  const fits = `${rowBytes(executor, table)} <= ${MAX_ROW_BYTES}`;
  if (!upTo) return pageOf(executor, table, columns, after, limit, fits);
  const first = (after?.length ?? 0) + 1;
  const statement = pageOf(executor, table, columns, after, limit, `${afterCursor(executor, table, first, '<=')} AND ${fits}`);
  return { sql: statement.sql, params: [...(after ?? []), ...upTo] };
}

/** The bounded values of the rows with these primary keys (a page read row by row), each row within MAX_ROW_BYTES. */
export function rowsByKeysQuery(executor: SqlExecutor, table: TableSchema, keys: unknown[][]): Statement {
  const columns = boundedColumns(executor, table).map((c) => `${c.sql} AS ${executor.quoteIdent(c.name)}`).join(', ');
  const match = existingKeysQuery(executor, table, keys, null);
  const order = table.primaryKey.map((c) => executor.quoteIdent(c)).join(', ');
  const where = match.sql.slice(match.sql.indexOf(' WHERE '));
  return { sql: `SELECT ${columns} FROM ${qualifiedName(executor, table)}${where} AND ${rowBytes(executor, table)} <= ${MAX_ROW_BYTES} ORDER BY ${order}`, params: match.params };
}

/** The size in bytes (`quarry_bytes`) of the row with this primary key, when the engine can build it. */
export function rowSizeQuery(executor: SqlExecutor, table: TableSchema, key: unknown[]): Statement {
  const match = existingKeysQuery(executor, table, [key], null);
  const where = match.sql.slice(match.sql.indexOf(' WHERE '));
  return { sql: `SELECT ${rowBytes(executor, table)} AS quarry_bytes FROM ${qualifiedName(executor, table)}${where}`, params: match.params };
}

/**
 * Which of these primary keys the source still has (within the first rows up to `upTo`, the last row a truncated
 * sync read): `SELECT key FROM t WHERE (key = ... OR ...) [AND key <= upTo]`.
 */
export function existingKeysQuery(executor: SqlExecutor, table: TableSchema, keys: unknown[][], upTo: unknown[] | null): { sql: string; params: unknown[] } {
  const columns = table.primaryKey.map((c) => executor.quoteIdent(c));
  const params: unknown[] = [];
  const mark = (value: unknown) => {
    params.push(value);
    return executor.placeholder(params.length);
  };
  const match = columns.length === 1
    ? `${columns[0]} IN (${keys.map((k) => mark(k[0])).join(', ')})`
    : keys.map((k) => `(${columns.map((c, i) => `${c} = ${mark(k[i])}`).join(' AND ')})`).join(' OR ');
  let where = `(${match})`;
  if (upTo) {
    where += ` AND ${afterCursor(executor, table, params.length + 1, '<=')}`;
    params.push(...upTo);
  }
  return { sql: `SELECT ${columns.join(', ')} FROM ${qualifiedName(executor, table)} WHERE ${where}`, params };
}

/** The cursor after a row: its primary key values in key order. */
export function cursorOf(table: TableSchema, row: Row): unknown[] {
  return table.primaryKey.map((column) => keyValue(row[column]));
}
