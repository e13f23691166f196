/**
 * One sync of a source table into the search index: read the table in primary key pages through the
 * connection's read-only executor, keep the rows that are new or changed (a content hash skips the rest), embed
 * them when the table is searched semantically (reusing any vector already made for the same text), and write them
 * several pages at a time; then drop the rows that are gone from the source and fold the new rows into the index.
 *
 * Each write makes a new version of the whole space's table, and each fold (optimize) compacts the space's small
 * files and brings its text indexes up to date: folding a growing table every few pages rewrote it again and again
 * (a million rows took six minutes and left 18 GB of old versions, docs/benchmarks.md). So rows are written in large
 * appends, and a table's first sync folds once, at its end: until then none of its rows is searchable anyway (the
 * table is not synced), and the other tables of the space are still found, their rows indexed as before. A later
 * sync, whose table is searched while it runs, still folds every `optimizeEveryRows` written rows.
 *
 * Progress, with the cursor, is written after each write and covers only rows written, so a stopped job resumes
 * after the last rows in the index, and re-reads what it held unwritten.
 */
import { isValueTooLarge, type SqlExecutor, type TableSchema } from '../connectors/index.js';
import type { IndexJobProgress, IndexJobRecord, NewIndexJob } from '../repositories/index-job-repository.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import {
  cursorOf, embeddingText, existingKeysQuery, indexRowOf, MAX_PAGE_BYTES, MAX_ROW_BYTES, pageKeysQuery, pageQuery, pageSizesQuery,
  primaryKeyJson, qualifiedName, rowId, rowsByKeysQuery, rowSizeQuery,
} from './documents.js';
import type { IndexedColumn } from './filter-columns.js';
import type { IndexRow, IndexSpace } from './index-store.js';

export interface SyncDeps {
  jobs: {
    progress(id: string, changes: IndexJobProgress): Promise<boolean>;
    finish(id: string, status: 'done', changes: IndexJobProgress, next?: NewIndexJob | null): Promise<boolean>;
  };
  /** The sync to queue as this one ends (the table's settings changed while it ran), if any. */
  followUp?(): Promise<NewIndexJob | null>;
  now: () => number;
  /** Rows read and held per page (fewer when embedding: a page is the longest a graceful stop waits). */
  pageRows: number;
  embedPageRows: number;
  /** Statement timeout of each read on the user's database. */
  queryTimeoutMs: number;
  /**
   * Rows written between two folds of new rows into the index during a long sync of a table already searched (a
   * first sync folds once, at its end).
   */
  optimizeEveryRows: number;
  /** Rows read before what they hold is written to the index in one write (fewer when their text is large). */
  writeRows: number;
}

/**
 * Characters of text, headings and stored fields held for one write, whatever the rows' size: the most one write
 * costs in memory (the standard corpus's articles hold about 2,000 each, so `writeRows` comes first for them).
 */
export const WRITE_BATCH_CHARS = 96 * 1024 * 1024;

export interface SyncRun {
  job: IndexJobRecord;
  executor: SqlExecutor;
  table: TableSchema;
  /** The indexed table's id, its `src` in the index. */
  src: string;
  space: IndexSpace;
  /** The embedding model when the table is searched semantically. */
  provider: EmbeddingProvider | null;
  /** Its filterable and sortable columns, copied into the index with each row. */
  columns: IndexedColumn[];
  /** Aborted when the job is cancelled here or the server stops. */
  signal: AbortSignal;
}

/** `done`: finished; `cancelled`: someone cancelled it (the store says so); `stopped`: aborted here. */
export type SyncOutcome = { status: 'done'; rows: number; truncated: boolean } | { status: 'cancelled' | 'stopped' };

interface Counters {
  rowsDone: number;
  rowsWritten: number;
  rowsEmbedded: number;
  rowsSkipped: number;
  rowsOversize: number;
}

export async function runSyncJob(deps: SyncDeps, run: SyncRun): Promise<SyncOutcome> {
  const { job, executor, table, signal, space } = run;
  const timeout = { timeoutMs: deps.queryTimeoutMs };
  const counters: Counters = { rowsDone: job.rowsDone, rowsWritten: job.rowsWritten, rowsEmbedded: job.rowsEmbedded, rowsSkipped: job.rowsSkipped, rowsOversize: job.rowsOversize };
  let cursor = job.cursor ? (JSON.parse(job.cursor) as unknown[]) : null;
  const pageRows = run.provider ? deps.embedPageRows : deps.pageRows;
  await space.ensureColumns(run.columns);
  // A table's first sync (nothing of it in the index yet, not resumed) only adds rows: nothing to compare or replace.
  const fresh = job.cursor === null && (await space.countRows(run.src)) === 0;

  if (job.rowsTotal === null) {
    const rowsTotal = Math.min(await countRows(executor, table, deps.queryTimeoutMs), job.rowLimit);
    if (!(await deps.jobs.progress(job.id, { rowsTotal }))) return { status: 'cancelled' };
  }

  // Rows read and ready to write, and the cursor and counters that will be saved once they are written.
  const pending: IndexRow[] = [];
  const pendingVectors = new Map<string, number[]>();
  let pendingChars = 0;
  let readSinceSave = 0;
  let sinceOptimize = 0;
  // One write runs while the next rows are read: the source's reading and the index's writing overlap (a first sync
  // of 100,000 rows spent 2.8 s reading and building rows and 3.0 s appending them, one after the other). Writes stay
  // in order, one at a time, each saving the cursor of its own rows once they are in the index.
  let writing: Promise<{ saved: boolean } | { error: unknown }> = Promise.resolve({ saved: true });
  /** Waits for the write under way: whether its progress was saved (false: the job was cancelled); rethrows its error. */
  const written = async (): Promise<boolean> => {
    const outcome = await writing;
    if ('error' in outcome) throw outcome.error;
    return outcome.saved;
  };
  const write = async (): Promise<boolean> => {
    const rows = pending.splice(0);
    const progress = { ...counters, cursor: JSON.stringify(cursor) };
    pendingVectors.clear();
    pendingChars = 0;
    readSinceSave = 0;
    if (!(await written())) return false;
    const run = async () => {
      if (rows.length > 0) await (fresh ? space.append(rows) : space.upsert(rows));
      sinceOptimize += rows.length;
      if (!fresh && sinceOptimize >= deps.optimizeEveryRows) {
        await space.optimize();
        sinceOptimize = 0;
      }
      return deps.jobs.progress(job.id, { ...progress, heartbeatAt: new Date(deps.now()) });
    };
    // Settled at once into a value: a failure is rethrown where the write is waited for, never left unhandled.
    writing = run().then((saved) => ({ saved }), (error: unknown) => ({ error }));
    return true;
  };
  for (;;) {
    // Rows held but not written are dropped: the saved cursor is before them, so the resumed job reads them again.
    if (signal.aborted) {
      await written();
      return { status: 'stopped' };
    }
    const room = job.rowLimit - counters.rowsDone;
    if (room <= 0) break;
    const size = Math.min(pageRows, room);
    const page = await readPage(executor, table, cursor, size, timeout);
    if (page.read === 0) break;
    if (page.rows.length > 0) {
      for (const row of await changedRows(run, page.rows, counters, fresh, pendingVectors)) {
        pending.push(row);
        pendingChars += row.text.length + row.head.length + row.fields.length;
        if (row.vector) pendingVectors.set(row.thash, row.vector);
      }
    }
    cursor = page.last;
    counters.rowsDone += page.read;
    counters.rowsOversize += page.oversize.length;
    readSinceSave += page.read;
    // A row that grew too large since the last sync is not left in the index with its old values.
    if (!fresh && page.oversize.length > 0) await space.deleteRows(page.oversize.map((key) => rowId(run.src, primaryKeyJson(table, keyRow(table, key)))));
    if (page.end) break;
    if (readSinceSave >= deps.writeRows || pendingChars >= WRITE_BATCH_CHARS) {
      if (!(await write())) return { status: 'cancelled' };
    }
  }
  if (signal.aborted) {
    await written();
    return { status: 'stopped' };
  }
  if (readSinceSave > 0 && !(await write())) return { status: 'cancelled' };
  if (!(await written())) return { status: 'cancelled' };
  if (signal.aborted) return { status: 'stopped' };

  if (signal.aborted) return { status: 'stopped' };
  const truncated = counters.rowsDone >= job.rowLimit && (await hasMoreRows(executor, table, cursor, timeout));
  // Rows the index could hold (a key too long to index is read but never written): a smaller count would hide a
  // deleted row behind each such row.
  const rowsDeleted = await dropGoneRows(run, counters.rowsWritten + counters.rowsSkipped, truncated ? cursor : null, timeout);
  // One fold: the new rows compacted and added to the text indexes (built here for a first sync's rows).
  await space.optimize();
  const rows = await space.countRows(run.src);
  const finished = await deps.jobs.finish(job.id, 'done', {
    ...counters, rowsDeleted, truncated, rowsTotal: counters.rowsDone, finishedAt: new Date(deps.now()),
  }, await deps.followUp?.());
  return finished ? { status: 'done', rows, truncated } : { status: 'cancelled' };
}

interface Page {
  /** The rows that fit, their values cut in SQL. */
  rows: Record<string, unknown>[];
  /** Rows this page covers in key order: those read and those skipped as too large. */
  read: number;
  /** Primary keys of the rows skipped as too large. */
  oversize: unknown[][];
  /** The primary key of the page's last row, read or skipped: where the next page starts. */
  last: unknown[] | null;
  /** The table has no rows after this page. */
  end: boolean;
}

/**
 * One page of the table: the rows' sizes first, then as many rows as fit in MAX_PAGE_BYTES, leaving out (and
 * counting) each row over MAX_ROW_BYTES. When the engine refuses to build some value of the page (SQLite's length
 * limit), the page is read row by row so that only the rows it refuses are skipped.
 */
async function readPage(executor: SqlExecutor, table: TableSchema, after: unknown[] | null, size: number, timeout: { timeoutMs: number }): Promise<Page> {
  let sized: Array<{ key: unknown[]; bytes: number | null }>;
  let rowByRow = false;
  try {
    const sizes = pageSizesQuery(executor, table, after, size);
    sized = (await executor.query(sizes.sql, sizes.params, timeout)).map((row) => ({ key: cursorOf(table, row), bytes: Number(row.quarry_bytes ?? 0) }));
  } catch (error) {
    if (!isValueTooLarge(error)) throw error;
    rowByRow = true;
    const keys = pageKeysQuery(executor, table, after, size);
    sized = [];
    for (const row of await executor.query(keys.sql, keys.params, timeout)) sized.push({ key: cursorOf(table, row), bytes: await rowSize(executor, table, cursorOf(table, row), timeout) });
  }
  let pageBytes = 0;
  let covered = 0;
  const oversize: unknown[][] = [];
  const kept: unknown[][] = [];
  for (const row of sized) {
    if (row.bytes === null || row.bytes > MAX_ROW_BYTES) {
      oversize.push(row.key);
    } else {
      if (kept.length > 0 && pageBytes + row.bytes > MAX_PAGE_BYTES) break;
      pageBytes += row.bytes;
      kept.push(row.key);
    }
    covered += 1;
  }
  const last = covered > 0 ? sized[covered - 1]!.key : after;
  const end = covered === sized.length && sized.length < size;
  if (kept.length === 0) return { rows: [], read: covered, oversize, last, end };
  const statement = rowByRow ? rowsByKeysQuery(executor, table, kept) : pageQuery(executor, table, after, covered, last);
  const rows = await executor.query(statement.sql, statement.params, timeout);
  return { rows, read: covered, oversize, last, end };
}

const keyRow = (table: TableSchema, key: unknown[]): Record<string, unknown> => Object.fromEntries(table.primaryKey.map((column, i) => [column, key[i]]));

/** A row's size in bytes, or null when the engine refuses to build one of its values. */
async function rowSize(executor: SqlExecutor, table: TableSchema, key: unknown[], timeout: { timeoutMs: number }): Promise<number | null> {
  try {
    const statement = rowSizeQuery(executor, table, key);
    const [row] = await executor.query<{ quarry_bytes: unknown }>(statement.sql, statement.params, timeout);
    return Number(row?.quarry_bytes ?? 0);
  } catch (error) {
    if (isValueTooLarge(error)) return null;
    throw error;
  }
}

/**
 * The page's rows that are new or changed (with vectors for semantic tables), to be written; `held` are the vectors
 * of rows read before and not written yet (by text hash), reused too.
 */
async function changedRows(run: SyncRun, sourceRows: Record<string, unknown>[], counters: Counters, fresh: boolean, held: Map<string, number[]>): Promise<IndexRow[]> {
  const { space, provider } = run;
  const rows = sourceRows.map((row) => indexRowOf(run.src, run.table, row, run.columns)).filter((row): row is IndexRow => row !== null);
  const stored = fresh ? new Map<string, never>() : await space.existing(rows.map((row) => row.rid));
  const changed = rows.filter((row) => {
    const known = stored.get(row.rid);
    return !known || known.hash !== row.hash || (provider !== null && known.vmodel !== provider.id && row.text !== '');
  });
  counters.rowsSkipped += rows.length - changed.length;
  if (provider) {
    counters.rowsEmbedded += await attachVectors(space, provider, changed, held);
    const dimensions = changed.find((row) => row.vector)?.vector?.length;
    if (dimensions) await space.ensureVectorColumn(dimensions);
  }
  counters.rowsWritten += changed.length;
  return changed;
}

/**
 * Gives every row with text a vector of the provider's model: one already in the space or among the rows held for
 * the next write for the same text (another table, or this row before a change of its other fields), else a new
 * embedding. Returns how many were embedded.
 */
async function attachVectors(space: IndexSpace, provider: EmbeddingProvider, rows: IndexRow[], held: Map<string, number[]>): Promise<number> {
  const withText = rows.filter((row) => row.text !== '');
  const known = await space.vectorsFor([...new Set(withText.filter((row) => !held.has(row.thash)).map((row) => row.thash))], provider.id);
  for (const row of withText) if (held.has(row.thash)) known.set(row.thash, held.get(row.thash)!);
  const missing = withText.filter((row) => !known.has(row.thash));
  const texts = [...new Map(missing.map((row) => [row.thash, embeddingText(row)])).entries()];
  const embedded = await provider.embed(texts.map(([, text]) => text), 'bulk');
  texts.forEach(([thash], i) => known.set(thash, Array.from(embedded[i]!)));
  for (const row of rows) {
    row.vector = row.text === '' ? null : (known.get(row.thash) ?? null);
    row.vmodel = row.vector ? provider.id : null;
  }
  return texts.length;
}

/**
 * Rows the index holds for the table beyond those the sync just read are gone from the source (or, after a plan's
 * row limit was lowered, past it). Only then is the index read back, in batches, and each batch's keys checked
 * against the source: bounded memory whatever the table's size, and no extra work in the usual case.
 */
async function dropGoneRows(run: SyncRun, rowsRead: number, upTo: unknown[] | null, timeout: { timeoutMs: number }): Promise<number> {
  const { space } = run;
  if ((await space.countRows(run.src)) <= rowsRead && upTo === null) return 0;
  let deleted = 0;
  for await (const scanned of space.scanSource(run.src)) {
    for (let i = 0; i < scanned.length; i += KEYS_PER_CHECK) deleted += await dropGoneBatch(run, scanned.slice(i, i + KEYS_PER_CHECK), upTo, timeout);
  }
  return deleted;
}

/** Keys checked against the source per statement (SQLite binds at most 32,766 parameters; composite keys use more). */
const KEYS_PER_CHECK = 500;

async function dropGoneBatch(run: SyncRun, batch: Array<{ rid: string; pk: string }>, upTo: unknown[] | null, timeout: { timeoutMs: number }): Promise<number> {
  const { space, executor, table } = run;
  const keys = batch.map((row) => table.primaryKey.map((column) => (JSON.parse(row.pk) as Record<string, unknown>)[column]));
  const statement = existingKeysQuery(executor, table, keys, upTo);
  const present = new Set((await executor.query(statement.sql, statement.params, timeout)).map((row) => JSON.stringify(cursorOf(table, row))));
  const gone = batch.filter((_, i) => !present.has(JSON.stringify(keys[i]))).map((row) => row.rid);
  await space.deleteRows(gone);
  return gone.length;
}

/** Rows in the table, for progress; the schema's estimate when counting takes too long. */
async function countRows(executor: SqlExecutor, table: TableSchema, timeoutMs: number): Promise<number> {
  try {
    const [row] = await executor.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(executor, table)}`, [], { timeoutMs });
    return Number(row?.n ?? 0);
  } catch {
    return table.rowEstimate;
  }
}

async function hasMoreRows(executor: SqlExecutor, table: TableSchema, cursor: unknown[] | null, timeout: { timeoutMs: number }): Promise<boolean> {
  const page = pageKeysQuery(executor, table, cursor, 1);
  return (await executor.query(page.sql, page.params, timeout)).length > 0;
}
