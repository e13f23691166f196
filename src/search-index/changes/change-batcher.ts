/**
 * What the two stream readers (PostgreSQL's logical replication, MySQL's binary log) share: the primary keys of
 * changed rows are gathered over transactions, one key once however often its row changed, and written as a batch
 * when enough keys are gathered or the oldest has waited long enough. A stream's work runs one task at a time, in
 * the order its changes arrived, so that a batch is never written while another is, nor while a change is gathered.
 * A stream ends once (stopped, lost to another process, or failed): the task running is let finish, no other runs,
 * and the reader is disconnected before the end is told.
 */
import { Mutex } from 'async-mutex';
import type { SqlExecutor, TableSchema } from '../../connectors/index.js';
import { primaryKeyJson, rowId, rowsByKeysQuery } from '../documents.js';
import type { EmbeddingProvider } from '../../embeddings/provider.js';
import type { IndexedColumn } from '../filter-columns.js';
import type { IndexSpace } from '../index-store.js';
import { writeRows } from './poll-job.js';

/** A table a stream follows, as its batches are written. */
export interface StreamedTable {
  /** The indexed table's id, its `src` in the index. */
  src: string;
  table: TableSchema;
  columns: IndexedColumn[];
  provider: EmbeddingProvider | null;
}

export type StreamEnd = { status: 'stopped' | 'lost' } | { status: 'failed'; error: unknown };

/** What a stream reader is given, whatever its server: where its batches are read from and written to. */
export interface StreamedRun {
  executor: SqlExecutor;
  space: IndexSpace;
  tables: StreamedTable[];
  /**
   * The table changed in a way its changes cannot carry (columns added or dropped, a TRUNCATE in a binary log): its
   * rows are re-read in full (a reconcile); returns the table's schema as discovered now, that the stream goes on
   * with (null: the table is gone).
   */
  reconcile(src: string): Promise<TableSchema | null>;
  /** Rows of these tables changed in the index (cached answers that read them are stale). */
  onApplied?(srcs: string[]): void;
  /** After a batch is written, before its position is stored: `rows` written or deleted (folds them in when due). */
  afterBatch?(rows: number): Promise<void>;
  /** Keys gathered before a batch is written, and how long a change waits at most for its batch. */
  batchKeys?: number;
  flushMs?: number;
  queryTimeoutMs?: number;
}

/** Per src, the changed rows' keys: a string naming the key (to coalesce), with the key's values. */
export type PendingKeys = Map<string, Map<string, unknown[]>>;

export interface ChangeBatcherOptions {
  /** Keys gathered before a batch is written at the end of a transaction (default 500). */
  batchKeys?: number;
  /** How long a change waits at most for its batch (default 500 ms). */
  flushMs?: number;
  /** Writes a batch; runs as one of the stream's tasks, never beside another. */
  write(batch: PendingKeys): Promise<void>;
  /** Lets go of the reader's connections once the stream has ended. */
  disconnect(): Promise<void> | void;
}

export class ChangeBatcher {
  private pending: PendingKeys = new Map();
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The stream's tasks (reading a transaction, writing a batch) run one at a time, in order. */
  private readonly tasks = new Mutex();
  private closed = false;
  private resolveEnd!: (end: StreamEnd) => void;
  /** Resolves when the stream ends: stopped, lost to another process, or failed (a task threw). */
  readonly done: Promise<StreamEnd>;

  constructor(private readonly options: ChangeBatcherOptions) {
    this.done = new Promise((resolve) => {
      this.resolveEnd = resolve;
    });
  }

  /** The stream has ended (or was abandoned): no task runs any more. */
  get ended(): boolean {
    return this.closed;
  }

  /** Keys gathered and not yet written. */
  get size(): number {
    return this.count;
  }

  /** Nothing is gathered and no batch is waiting for its timer. */
  get idle(): boolean {
    return this.count === 0 && this.timer === null;
  }

  /** A changed row: `id` names its key, so that the row changed again is still one key. */
  add(src: string, id: string, key: unknown[]): void {
    let keys = this.pending.get(src);
    if (!keys) this.pending.set(src, (keys = new Map()));
    if (!keys.has(id)) this.count += 1;
    keys.set(id, key);
  }

  /** Drops what was gathered for a table (its rows are removed whole). */
  drop(src: string): void {
    const keys = this.pending.get(src);
    if (!keys) return;
    this.count -= keys.size;
    this.pending.delete(src);
  }

  /**
   * A transaction ended: the batch is written now when it is full (or `now`), else within `flushMs`. Call it from a
   * task: the write then runs as part of that task.
   */
  async committed(now = false): Promise<void> {
    if (now || this.count >= (this.options.batchKeys ?? 500)) return this.flush();
    this.schedule();
  }

  /** Writes what was gathered; call it from a task (`run`), or use `flushNow` from outside. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.pending;
    this.pending = new Map();
    this.count = 0;
    await this.options.write(batch);
  }

  /** Writes what was gathered once the tasks before are done. */
  flushNow(): Promise<void> {
    return this.run(() => this.flush());
  }

  /** Runs a task after the ones before it; none runs once the stream has ended. A task that throws fails it. */
  run(task: () => Promise<void>): Promise<void> {
    return this.tasks.runExclusive(async () => {
      if (this.closed) return;
      try {
        await task();
      } catch (error) {
        this.end({ status: 'failed', error });
      }
    });
  }

  /**
   * Ends the stream: no task runs after the current one, which is let finish; then the reader is disconnected and
   * `done` resolves. What was gathered and not written is left for the next reader (its position was not stored).
   */
  end(end: StreamEnd): void {
    if (!this.close()) return;
    // After every task already waiting (they see the stream closed and do nothing).
    void this.tasks.runExclusive(async () => this.options.disconnect()).catch(() => undefined).finally(() => this.resolveEnd(end));
  }

  /** Ends as if the process died: the reader is cut at once, nothing more written or stored (tests of a takeover). */
  async abandon(): Promise<void> {
    if (!this.close()) return;
    await Promise.resolve(this.options.disconnect()).catch(() => undefined);
    this.resolveEnd({ status: 'lost' });
  }

  /** False when already closed. */
  private close(): boolean {
    if (this.closed) return false;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return true;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run(() => this.flush());
    }, this.options.flushMs ?? 500);
    this.timer.unref();
  }
}

/**
 * A stream reader as the streamer sees it (PgChangeStream, BinlogChangeStream): its changes are gathered and written
 * by its batcher, its own part is to read them (`write` a batch, `disconnect` its connections).
 */
export abstract class BatchedChangeStream {
  protected readonly batcher: ChangeBatcher;
  /** Resolves when the stream ends: stopped, lost to another process, or failed (the caller retries). */
  readonly done: Promise<StreamEnd>;

  protected constructor(settings: { batchKeys?: number; flushMs?: number }) {
    this.batcher = new ChangeBatcher({
      batchKeys: settings.batchKeys,
      flushMs: settings.flushMs,
      write: (batch) => this.write(batch),
      disconnect: () => this.disconnect(),
    });
    this.done = this.batcher.done;
  }

  /** Stops reading: what was received but not written comes again to the next reader (its position was not stored). */
  async stop(): Promise<StreamEnd> {
    this.batcher.end({ status: 'stopped' });
    return this.done;
  }

  /** Ends as if the process died: the connections are cut, nothing written or stored (tests of a takeover). */
  abandon(): Promise<void> {
    return this.batcher.abandon();
  }

  /** Writes what was gathered, then stores the position (tests wait on it). */
  flushNow(): Promise<void> {
    return this.batcher.flushNow();
  }

  /** Writes a batch to the index, then stores the position the stream has received up to. */
  protected abstract write(batch: PendingKeys): Promise<void>;

  /** Lets go of the reader's connections. */
  protected abstract disconnect(): Promise<void> | void;
}

export interface KeysRead {
  executor: SqlExecutor;
  space: IndexSpace;
  queryTimeoutMs?: number;
}

/**
 * Writes a batch: each table's changed rows are re-read by key with the bounded SELECT a sync uses, the rows found
 * are written, the keys the source no longer has are deleted from the index. `idOf` names a key as the batch named
 * it, so that a row read back is matched to its key; a src `entryOf` no longer knows (its table gone) is passed
 * over. Returns the rows written and deleted, and the tables whose index rows changed.
 */
export async function writeBatch(
  read: KeysRead,
  batch: PendingKeys,
  entryOf: (src: string) => StreamedTable | undefined,
  idOf: (table: TableSchema, key: unknown[]) => string,
): Promise<{ written: number; deleted: number; touched: string[] }> {
  const total = { written: 0, deleted: 0, touched: [] as string[] };
  for (const [src, keys] of batch) {
    const entry = entryOf(src);
    if (!entry) continue;
    const { written, deleted } = await writeKeys(read, entry, keys, (key) => idOf(entry.table, key));
    total.written += written;
    total.deleted += deleted;
    if (written + deleted > 0) total.touched.push(src);
  }
  return total;
}

async function writeKeys(read: KeysRead, entry: StreamedTable, keys: Map<string, unknown[]>, idOf: (key: unknown[]) => string): Promise<{ written: number; deleted: number }> {
  const { executor, space } = read;
  const { table } = entry;
  const all = [...keys.entries()];
  let written = 0;
  let deleted = 0;
  for (let i = 0; i < all.length; i += 500) {
    const page = all.slice(i, i + 500);
    const statement = rowsByKeysQuery(executor, table, page.map(([, key]) => key));
    const rows = await executor.query(statement.sql, statement.params, { timeoutMs: read.queryTimeoutMs ?? 30_000 });
    const found = new Set(rows.map((row) => idOf(table.primaryKey.map((c) => row[c]))));
    written += await writeRows({ src: entry.src, table, space, provider: entry.provider, columns: entry.columns }, rows);
    const gone = page.filter(([id]) => !found.has(id))
      .map(([, key]) => rowId(entry.src, primaryKeyJson(table, Object.fromEntries(table.primaryKey.map((c, n) => [c, key[n]])))));
    const stored = gone.length > 0 ? await space.existing(gone) : new Map();
    const removed = gone.filter((rid) => stored.has(rid));
    if (removed.length > 0) await space.deleteRows(removed);
    deleted += removed.length;
  }
  return { written, deleted };
}
