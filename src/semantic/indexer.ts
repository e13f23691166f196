/**
 * One index job's work: read the table in primary key order a page at a time through the connection's read-only
 * executor, embed the rows whose text changed, store their vectors, and finally drop vectors of rows that are gone.
 * Progress (with the cursor) is written after every page, so a stopped job resumes where it was.
 */
import type { SqlExecutor, TableSchema } from '../connectors/index.js';
import type { SemanticIndexJobRecord, SemanticIndexJobRepository } from '../repositories/semantic-index-job-repository.js';
import type { NewVector, SemanticVectorRepository } from '../repositories/semantic-vector-repository.js';
import type { EmbeddingProvider } from './provider.js';
import { contentHash, cursorOf, MAX_KEY_CHARS, pageQuery, primaryKeyJson, qualifiedName, searchableText } from './row-text.js';
import { toBlob } from './vectors.js';

export interface IndexerDeps {
  jobs: Pick<SemanticIndexJobRepository, 'progress' | 'finish'>;
  vectors: Pick<SemanticVectorRepository, 'existing' | 'writeBatch' | 'sweep'>;
  provider: EmbeddingProvider;
  now: () => number;
  /** Rows read and held per page: with the model's chunking, this bounds the memory of a running job. */
  pageRows: number;
  /** Statement timeout of each read on the user's database. */
  queryTimeoutMs: number;
}

export interface IndexRun {
  job: SemanticIndexJobRecord;
  executor: SqlExecutor;
  table: TableSchema;
  /** Aborted when the job is cancelled here or the server stops. */
  signal: AbortSignal;
}

/** `done`: finished and stored; `cancelled`: someone cancelled it (the store says so); `stopped`: aborted here. */
export type IndexOutcome = 'done' | 'cancelled' | 'stopped';

interface Counters {
  rowsDone: number;
  rowsEmbedded: number;
  rowsSkipped: number;
}

export async function runIndexJob(deps: IndexerDeps, run: IndexRun): Promise<IndexOutcome> {
  const { job, executor, table, signal } = run;
  const timeout = { timeoutMs: deps.queryTimeoutMs };
  const counters: Counters = { rowsDone: job.rowsDone, rowsEmbedded: job.rowsEmbedded, rowsSkipped: job.rowsSkipped };
  let cursor = job.cursor ? (JSON.parse(job.cursor) as unknown[]) : null;

  if (job.rowsTotal === null) {
    const rowsTotal = Math.min(await countRows(executor, table, deps.queryTimeoutMs), job.rowLimit);
    if (!(await deps.jobs.progress(job.id, { rowsTotal }))) return 'cancelled';
  }

  for (;;) {
    if (signal.aborted) return 'stopped';
    const room = job.rowLimit - counters.rowsDone;
    if (room <= 0) break;
    const page = pageQuery(executor, table, cursor, Math.min(deps.pageRows, room));
    const rows = await executor.query(page.sql, page.params, timeout);
    if (rows.length === 0) break;
    await indexPage(deps, run, rows, counters);
    cursor = cursorOf(table, rows[rows.length - 1]);
    counters.rowsDone += rows.length;
    const written = await deps.jobs.progress(job.id, { ...counters, cursor: JSON.stringify(cursor), heartbeatAt: new Date(deps.now()) });
    if (!written) return 'cancelled';
    if (rows.length < Math.min(deps.pageRows, room)) break;
  }

  if (signal.aborted) return 'stopped';
  const truncated = counters.rowsDone >= job.rowLimit && (await hasMoreRows(executor, table, cursor, timeout));
  const rowsDeleted = await deps.vectors.sweep(job.connectionId, job.tableName, job.id);
  const finished = await deps.jobs.finish(job.id, 'done', {
    ...counters, rowsDeleted, truncated, rowsTotal: counters.rowsDone, finishedAt: new Date(deps.now()),
  });
  return finished ? 'done' : 'cancelled';
}

/** Embeds the page's new and changed rows and marks the unchanged ones as seen. */
async function indexPage(deps: IndexerDeps, run: IndexRun, rows: Record<string, unknown>[], counters: Counters): Promise<void> {
  const { job, table } = run;
  const candidates = rows
    .map((row) => {
      const text = searchableText(table, row);
      return { key: primaryKeyJson(table, row), text, hash: contentHash(text) };
    })
    // Rows without text have nothing to embed; an oversized key cannot be stored. Neither is marked seen, so a
    // vector left from an earlier run is swept at the end.
    .filter((row) => row.text !== '' && row.key.length <= MAX_KEY_CHARS);
  const stored = await deps.vectors.existing(job.connectionId, job.tableName, candidates.map((row) => row.key));
  const changed: typeof candidates = [];
  const seenIds: number[] = [];
  const replaceIds: number[] = [];
  for (const row of candidates) {
    const known = stored.get(row.key);
    if (known && known.contentHash === row.hash && known.providerId === deps.provider.id) {
      seenIds.push(known.id);
      continue;
    }
    changed.push(row);
    if (known) replaceIds.push(known.id);
  }
  const embedded = await deps.provider.embed(changed.map((row) => row.text), 'bulk');
  const fresh: NewVector[] = changed.map((row, i) => ({
    primaryKey: row.key, contentHash: row.hash, providerId: deps.provider.id, vector: toBlob(embedded[i]),
  }));
  await deps.vectors.writeBatch(job.connectionId, job.tableName, job.id, fresh, replaceIds, seenIds, new Date(deps.now()));
  counters.rowsEmbedded += fresh.length;
  counters.rowsSkipped += seenIds.length;
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
  const page = pageQuery(executor, table, cursor, 1);
  return (await executor.query(page.sql, page.params, timeout)).length > 0;
}
