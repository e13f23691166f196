/**
 * What indexing reads from a source row: its searchable text (the table's text columns), a hash of that text to skip
 * unchanged rows, and its primary key as stable JSON (the row reference search returns).
 */
import { createHash } from 'node:crypto';
import type { SqlExecutor, TableSchema } from '../connectors/index.js';

/**
 * The model reads about the first 128 word pieces of a text and its cost grows with length, so longer text only
 * costs time: a row contributes its first 1,000 characters.
 */
export const MAX_TEXT_CHARS = 1000;
/** A primary key longer than this as JSON is not indexed (the store's unique index would refuse it). */
export const MAX_KEY_CHARS = 512;

type Row = Record<string, unknown>;

/** A value as JSON-safe scalar: bigints and dates as strings, bytes as hex. */
export function keyValue(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value.toString('hex');
  return String(value);
}

/** `{"id":42}`: the row's primary key column(s) and value(s), in key order. */
export function primaryKeyJson(table: TableSchema, row: Row): string {
  return JSON.stringify(Object.fromEntries(table.primaryKey.map((column) => [column, keyValue(row[column])])));
}

/** The text the model reads: the non-empty text columns, one per line, cut at MAX_TEXT_CHARS. */
export function searchableText(table: TableSchema, row: Row): string {
  const parts: string[] = [];
  for (const column of table.textColumns) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    const text = (Buffer.isBuffer(value) ? value.toString('utf8') : String(value)).trim();
    if (text) parts.push(text);
  }
  return parts.join('\n').slice(0, MAX_TEXT_CHARS);
}

/** sha256 of the searchable text: equal text, equal hash, no second embedding. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `schema.table` outside PostgreSQL's `public`, else the bare name (how search names tables too). */
export function tableId(table: TableSchema): string {
  return table.schema && table.schema !== 'public' ? `${table.schema}.${table.name}` : table.name;
}

/** Rows a table can be indexed by: it needs a primary key (the row reference) and text to embed. */
export function indexableProblem(table: TableSchema): string | null {
  if (table.primaryKey.length === 0) return 'has no primary key, so its rows have no stable reference';
  if (table.textColumns.length === 0) return 'has no text columns to embed';
  return null;
}

/**
 * One page of rows after `after` (the previous page's last primary key) in primary key order: keyset paging, so a
 * resumed job reads on where it stopped and no page costs more than its own rows. Identifiers come from the
 * discovered schema and are quoted by the engine; values are bound.
 */
export function pageQuery(executor: SqlExecutor, table: TableSchema, after: unknown[] | null, limit: number): { sql: string; params: unknown[] } {
  const q = (name: string) => executor.quoteIdent(name);
  const from = qualifiedName(executor, table);
  const columns = [...new Set([...table.primaryKey, ...table.textColumns])].map(q).join(', ');
  const key = table.primaryKey.map(q);
  const order = key.join(', ');
  const pageSize = Math.max(1, Math.floor(limit));
  if (!after) return { sql: `SELECT ${columns} FROM ${from} ORDER BY ${order} LIMIT ${pageSize}`, params: [] };
  const marks = after.map((_, i) => executor.placeholder(i + 1));
  const where = key.length === 1 ? `${key[0]} > ${marks[0]}` : `(${key.join(', ')}) > (${marks.join(', ')})`;
  return { sql: `SELECT ${columns} FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT ${pageSize}`, params: after };
}

/** The table's name quoted for the engine, schema-qualified on PostgreSQL. */
export function qualifiedName(executor: SqlExecutor, table: TableSchema): string {
  const name = executor.quoteIdent(table.name);
  return table.schema && executor.engine === 'postgres' ? `${executor.quoteIdent(table.schema)}.${name}` : name;
}

/** The cursor after a row: its primary key values in key order. */
export function cursorOf(table: TableSchema, row: Row): unknown[] {
  return table.primaryKey.map((column) => keyValue(row[column]));
}
