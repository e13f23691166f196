/**
 * One poll of a table in poll mode: the rows whose change column is at or past the cursor are read (in change
 * order, keyset pages) and written to the index by primary key.
 *
 * The cursor is the change value of the last row written, that row's key, and since when that value is the last one
 * read. For BOUNDARY_REREAD_MS after a value was first reached the next poll starts AT it, not after it: rows that
 * share that value (concurrent transactions stamped alike, a column of whole seconds) may not all have been committed
 * or read yet. Reading them again costs a read, never a write: rows are written by primary key, and a row whose
 * content hash is unchanged is skipped. After that, polls go on after the last row's key: a table loaded in one
 * statement (every row the same `updated_at`) was otherwise read whole by every poll until its next change (measured
 * on MariaDB: each poll of 100,000 such rows took seconds, docs/benchmarks.md). The cursor is saved after every page,
 * so a process that stops or dies mid-poll is resumed, here or by another process, from where it was.
 *
 * Deletes leave no row to read: when the source counts fewer rows than the index holds for the table, the source's
 * primary keys alone are read and the index's rows without one are dropped.
 */
import type { SqlExecutor, TableSchema } from '../../connectors/index.js';
import type { EmbeddingProvider } from '../../embeddings/provider.js';
import { boundedColumns, embeddingText, indexRowOf, MAX_ROW_BYTES, pageKeysQuery, primaryKeyJson, qualifiedName, rowBytes } from '../documents.js';
import type { IndexedColumn } from '../filter-columns.js';
import type { IndexRow, IndexSpace } from '../index-store.js';

export interface PollDeps {
  /** Saves the cursor after a page; false when this process no longer holds the table (or it follows another column). */
  saveCursor(cursor: string): Promise<boolean>;
  /** Rows read per page of changes, and keys per page of the key scan. */
  pageRows: number;
  queryTimeoutMs: number;
  now?: () => number;
}

/**
 * How long the rows sharing the last change value read are read again by the polls after it: longer than another
 * transaction stamped with that value takes to commit, in practice. (A transaction stamped before the cursor and
 * committed after it is a change column's limit whatever the rule; the scheduled full sync reconciles it.)
 */
export const BOUNDARY_REREAD_MS = 30_000;

/** Where a poll goes on from: the last change value written, its row's key, since when that value is the last. */
interface PollCursor {
  value: string;
  /** Null: not kept (a key of other than strings and numbers, or a cursor saved before keys were), so the next poll starts at the value. */
  key: Array<string | number> | null;
  since: number;
}

/** A stored cursor: this module's JSON, or the change value alone as JSON text (cursors saved before keys were). */
export function parseCursor(text: string | null): PollCursor | null {
  if (text === null) return null;
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed === 'string') return { value: parsed, key: null, since: 0 };
  const { value, key, since } = parsed as PollCursor;
  return { value: String(value), key: Array.isArray(key) ? key : null, since: Number(since) };
}

/** The key as stored: kept only when JSON gives back the same values to bind (strings and finite numbers). */
function storableKey(values: unknown[]): Array<string | number> | null {
  return values.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) ? (values as Array<string | number>) : null;
}

export interface PollRun {
  executor: SqlExecutor;
  table: TableSchema;
  /** The indexed table's id, its `src` in the index. */
  src: string;
  space: IndexSpace;
  changeColumn: string;
  /** JSON of the change value to read from (null: every row, the first poll). */
  cursor: string | null;
  /** Rows of the table the index holds at most (the first in primary key order, as a sync keeps them). */
  rowLimit: number;
  provider: EmbeddingProvider | null;
  columns: IndexedColumn[];
  signal: AbortSignal;
}

export type PollOutcome =
  | { status: 'done'; cursor: string | null; read: number; written: number; deleted: number }
  | { status: 'stopped' | 'lost' };

/** Alias of the change value, read as text so that it is bound back exactly (microseconds, big numbers). */
const CHANGE_ALIAS = 'quarry_change_value';

type Statement = { sql: string; params: unknown[] };

/**
 * The next page of changed rows: `col >= cursor` on the first page of a poll, `(col, key) > (value, key)` after a
 * page (keyset), ordered by the change column then the primary key. Rows without a change value are never read here
 * (a full sync reads them). Identifiers come from the discovered schema; values are bound.
 */
export function changesQuery(executor: SqlExecutor, table: TableSchema, changeColumn: string, from: { value: string; key: unknown[] | null } | null, limit: number): Statement {
  const change = executor.quoteIdent(changeColumn);
  const keys = table.primaryKey.map((c) => executor.quoteIdent(c));
  const asText = executor.engine === 'mysql' ? `CAST(${change} AS CHAR)` : `CAST(${change} AS TEXT)`;
  const columns = boundedColumns(executor, table).map((c) => `${c.sql} AS ${executor.quoteIdent(c.name)}`);
  const params: unknown[] = [];
  const mark = (value: unknown) => {
    params.push(value);
    return executor.placeholder(params.length);
  };
  const where = [`${change} IS NOT NULL`, `${rowBytes(executor, table)} <= ${MAX_ROW_BYTES}`];
  if (from && from.key === null) where.push(`${change} >= ${mark(from.value)}`);
  if (from && from.key !== null) {
    const value = mark(from.value);
    where.push(`(${[change, ...keys].join(', ')}) > (${[value, ...from.key.map(mark)].join(', ')})`);
  }
  const sql = `SELECT ${columns.join(', ')}, ${asText} AS ${executor.quoteIdent(CHANGE_ALIAS)} FROM ${qualifiedName(executor, table)}`
    + ` WHERE ${where.join(' AND ')} ORDER BY ${[change, ...keys].join(', ')} LIMIT ${Math.max(1, Math.floor(limit))}`;
  return { sql, params };
}

export async function runPoll(deps: PollDeps, run: PollRun): Promise<PollOutcome> {
  const { executor, table, space, signal } = run;
  const timeout = { timeoutMs: deps.queryTimeoutMs };
  const now = deps.now ?? Date.now;
  let cursor = run.cursor;
  let at = parseCursor(cursor);
  // The last value's rows again while others stamped alike may still commit; after the last row's key once they cannot.
  let from: { value: string; key: unknown[] | null } | null = at === null ? null
    : { value: at.value, key: at.key !== null && now() - at.since >= BOUNDARY_REREAD_MS ? at.key : null };
  let read = 0;
  let written = 0;
  await space.ensureColumns(run.columns);

  for (;;) {
    if (signal.aborted) return { status: 'stopped' };
    const statement = changesQuery(executor, table, run.changeColumn, from, deps.pageRows);
    const rows = await executor.query(statement.sql, statement.params, timeout);
    if (rows.length === 0) break;
    written += await writeRows(run, rows);
    read += rows.length;
    const last = rows[rows.length - 1]!;
    const value = String(last[CHANGE_ALIAS]);
    from = { value, key: table.primaryKey.map((c) => last[c]) };
    at = { value, key: storableKey(from.key!), since: at?.value === value && at.since > 0 ? at.since : now() };
    cursor = JSON.stringify(at);
    if (!(await deps.saveCursor(cursor))) return { status: 'lost' };
    if (rows.length < deps.pageRows) break;
  }

  if (signal.aborted) return { status: 'stopped' };
  // Every insert and update is read above, so the index holds fewer rows than the source only if rows were deleted
  // (or an insert stamped with an older change value hides behind a delete, which the next poll's count shows): the
  // keys are scanned only then. A truncated table counts nothing.
  const sourceRows = await countUpTo(executor, table, run.rowLimit, timeout);
  const deleted = sourceRows === (await space.countRows(run.src)) ? 0 : await dropDeleted(deps, run, timeout);
  return { status: 'done', cursor, read, written, deleted };
}

/** Rows of the table, counted up to `limit` (the index holds no more). */
async function countUpTo(executor: SqlExecutor, table: TableSchema, limit: number, timeout: { timeoutMs: number }): Promise<number> {
  const [row] = await executor.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM ${qualifiedName(executor, table)} LIMIT ${Math.max(1, Math.floor(limit))}) AS kept`, [], timeout);
  return Number(row?.n ?? 0);
}

/**
 * Writes the rows that are new or changed (with vectors for semantic tables); returns how many. A row whose content
 * hash the index already holds is skipped, so reading a row twice (a poll's boundary, a stream's replay) costs no write.
 */
export async function writeRows(run: Pick<PollRun, 'src' | 'table' | 'space' | 'provider' | 'columns'>, sourceRows: Record<string, unknown>[]): Promise<number> {
  const { space, provider } = run;
  const rows = sourceRows.map((row) => indexRowOf(run.src, run.table, row, run.columns)).filter((row): row is IndexRow => row !== null);
  const stored = await space.existing(rows.map((row) => row.rid));
  const changed = rows.filter((row) => {
    const known = stored.get(row.rid);
    return !known || known.hash !== row.hash || (provider !== null && known.vmodel !== provider.id && row.text !== '');
  });
  if (changed.length === 0) return 0;
  if (provider) {
    const withText = changed.filter((row) => row.text !== '');
    const known = await space.vectorsFor([...new Set(withText.map((row) => row.thash))], provider.id);
    const missing = [...new Map(withText.filter((row) => !known.has(row.thash)).map((row) => [row.thash, embeddingText(row)])).entries()];
    const embedded = await provider.embed(missing.map(([, text]) => text), 'bulk');
    missing.forEach(([thash], i) => known.set(thash, Array.from(embedded[i]!)));
    for (const row of changed) {
      row.vector = row.text === '' ? null : (known.get(row.thash) ?? null);
      row.vmodel = row.vector ? provider.id : null;
    }
    const dimensions = changed.find((row) => row.vector)?.vector?.length;
    if (dimensions) await space.ensureVectorColumn(dimensions);
  }
  await space.upsert(changed);
  return changed.length;
}

/**
 * Rows of the index whose primary key the source no longer has (deleted, the table truncated) or that lie past
 * the row limit: the source's keys are read alone, in primary key pages, up to the row limit, then the index's rows
 * of the table are checked against them. A key is a few bytes, so this is the cheap pass that finds deletes
 * without reading the rows.
 */
async function dropDeleted(deps: PollDeps, run: PollRun, timeout: { timeoutMs: number }): Promise<number> {
  const { executor, table, space } = run;
  const present = new Set<string>();
  let after: unknown[] | null = null;
  while (present.size < run.rowLimit) {
    if (run.signal.aborted) return 0;
    const size = Math.min(deps.pageRows * 4, run.rowLimit - present.size);
    const page = pageKeysQuery(executor, table, after, size);
    const keys = await executor.query(page.sql, page.params, timeout);
    for (const row of keys) present.add(primaryKeyJson(table, row));
    if (keys.length === 0) break;
    const last = keys[keys.length - 1]!;
    after = table.primaryKey.map((c) => last[c]);
    if (keys.length < size) break;
  }
  const gone: string[] = [];
  for await (const batch of space.scanSource(run.src)) for (const row of batch) if (!present.has(row.pk)) gone.push(row.rid);
  for (let i = 0; i < gone.length; i += 1000) await space.deleteRows(gone.slice(i, i + 1000));
  return gone.length;
}
