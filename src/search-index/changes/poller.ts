/**
 * Poll mode in one process: tables whose owner named a change column are read every `pollIntervalSeconds` for
 * the rows changed since the last poll (poll-job.ts), between the full syncs that stay the reconcile of last resort.
 *
 * One process polls a table at a time, whatever processes run: a poll is claimed in the store with a conditional
 * update and kept by a heartbeat; a process that dies loses its tables to the others once its heartbeat is stale,
 * and they resume from the stored cursor. A poll waits while a sync job writes the table, or writes its search space
 * from another process (one writer per space), and a poll that overlapped a sync of its own table reads its range again next time, since the sync
 * may have written older copies of the rows it wrote.
 *
 * A column added to or dropped from the table changes every row's stored fields: the poller notices it (the
 * source's column list no longer matches the discovered schema), queues a full sync and goes on from the change
 * value the table had then; if the change column itself was dropped, poll mode ends with an error to show.
 */
import { isConnectorError, type SqlExecutor, type TableSchema } from '../../connectors/index.js';
import type { EmbeddingProvider } from '../../embeddings/provider.js';
import { AppError } from '../../errors/app-error.js';
import { ChangeFollowers, type ChangeFollowersDeps } from './change-followers.js';
import type { Logger } from '../../lib/logger.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableChanges, IndexTableRecord, IndexTableRepository } from '../../repositories/index-table-repository.js';
import { qualifiedName, tableId } from '../documents.js';
import { indexedColumns } from '../filter-columns.js';
import { spaceName, type IndexStore } from '../index-store.js';
import { isIndexStorageFailure } from '../storage-failures.js';
import { runPoll } from './poll-job.js';
import type { ConnectionCatalog } from '../../search-core/connection-catalog.js';

/** A table's poll interval when its owner named none. */
export const DEFAULT_POLL_INTERVAL_SECONDS = 5;

/**
 * When a table's next poll is due: `interval` after this one started, so that a table is read every interval as its
 * owner asked, whatever a poll takes (a poll ending at 300 ms of a 1 s interval made the next start 1 s after that,
 * and up to one tick later still: a change waited about 2 s for a poll every second, docs/benchmarks.md). A poll that
 * took longer than the interval has the next due at once: the changes come faster than one poll an interval reads.
 */
export function nextPollAt(started: number, finished: number, interval: number): number {
  return Math.max(finished, started + interval);
}

/** Besides the heartbeat's and tick's (ChangeFollowersDeps: staleMs is INDEX_SYNC_STALE_MS). */
export interface ChangePollerDeps extends ChangeFollowersDeps {
  tables: Pick<IndexTableRepository, 'duePolls' | 'claimPoll' | 'pollProgress' | 'touchPolls' | 'releasePolls' | 'update'>;
  jobs: { latest(connectionId: string, tableName: string): Promise<IndexJobRecord | null>; runningSpaces(): Promise<string[]> };
  store: Pick<IndexStore, 'ensureSpace'>;
  /** A sync job of the space runs in this process. */
  runsSpace?(space: string): boolean;
  provider: EmbeddingProvider;
  findConnection(id: string): Promise<DatabaseConnectionRecord | null>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  rowLimit(userId: string): Promise<number>;
  /** Queues a full sync of the table (its columns changed). */
  reconcile(record: DatabaseConnectionRecord, tableName: string): Promise<void>;
  /** The table's rows in the index changed: cached answers that read it are stale. */
  onApplied(connectionId: string, tableName: string): void;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** Polls this process runs at once. */
  maxActive?: number;
  pageRows?: number;
  queryTimeoutMs?: number;
}

interface ActivePoll {
  abort: AbortController;
  finished: Promise<void>;
}

function safeError(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  if (isConnectorError(error)) return error.toSafeError();
  return { code: 'INTERNAL_ERROR', message: 'The poll failed unexpectedly; it is tried again at the next interval.' };
}

export class ChangePoller extends ChangeFollowers<ActivePoll> {
  constructor(private readonly deps: ChangePollerDeps) {
    super(deps, 'change poller');
  }

  protected heldIds(): string[] {
    return [...this.active.keys()];
  }

  /** Claims the due polls there is room for and starts them. */
  protected async claimDue(): Promise<void> {
    const room = (this.deps.maxActive ?? 4) - this.active.size;
    if (this.stopping || room <= 0) return;
    const now = this.now();
    const due = await this.deps.tables.duePolls(new Date(now), new Date(now - this.deps.staleMs), room + this.active.size);
    for (const seen of due) {
      if (this.stopping || this.active.size >= (this.deps.maxActive ?? 4) || this.active.has(seen.id)) continue;
      const claimed = await this.deps.tables.claimPoll(seen, this.owner, new Date(this.now()));
      if (claimed) this.launch(claimed);
    }
  }

  /** Resolves when no poll runs here (tests). */
  async idle(): Promise<void> {
    await this.ticking;
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((poll) => poll.finished));
  }

  /** Graceful stop: polls stop between pages and are handed back, their cursors kept for whoever polls next. */
  async stop(): Promise<void> {
    await this.halt();
    const running = [...this.active.values()];
    for (const poll of running) poll.abort.abort();
    await Promise.all(running.map((poll) => poll.finished));
  }

  private launch(table: IndexTableRecord): void {
    const abort = new AbortController();
    const poll: ActivePoll = { abort, finished: Promise.resolve() };
    this.active.set(table.id, poll);
    poll.finished = this.run(table, abort.signal)
      .catch((error) => this.deps.logger.error({ err: error, table: table.id }, 'poll bookkeeping failed'))
      .finally(() => {
        this.active.delete(table.id);
      });
  }

  private async run(entry: IndexTableRecord, signal: AbortSignal): Promise<void> {
    const changeColumn = entry.changeColumn!;
    const interval = (entry.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS) * 1000;
    const started = this.now();
    const release = async (changes: IndexTableChanges = {}) => {
      const next = nextPollAt(started, this.now(), interval);
      await this.deps.tables.releasePolls([entry.id], this.owner, { nextPollAt: new Date(next), ...changes });
      this.wakeAt(next);
    };
    try {
      const record = await this.deps.findConnection(entry.connectionId);
      if (!record || !record.indexEnabled) return await release();
      const space = spaceName(record.userId, record.environment);
      const latest = await this.deps.jobs.latest(record.id, entry.tableName);
      // A sync of this table goes first. So does a sync of another table of the space in another process (one
      // writer per space); one in this process takes turns with the poll on the space's lock.
      const elsewhere = !(this.deps.runsSpace?.(space) ?? false) && (await this.deps.jobs.runningSpaces()).includes(space);
      if (latest?.status === 'running' || elsewhere) return await release();
      const executor = await this.deps.executorFor(record);
      let table = (await this.deps.catalog.tables(record)).find((t) => tableId(t) === entry.tableName);
      if (!table || !sameColumns(table, await liveColumns(executor, table, this.deps.queryTimeoutMs ?? 30_000))) {
        table = (await this.deps.catalog.tables(record, true)).find((t) => tableId(t) === entry.tableName);
        if (!table) throw new AppError('NOT_FOUND', `The table "${entry.tableName}" is no longer in the database's schema.`, { resource: 'table', id: entry.tableName });
        return await this.columnsChanged(record, entry, table, executor, release);
      }
      const indexed = await this.deps.store.ensureSpace(space);
      const outcome = await runPoll(
        {
          saveCursor: (cursor) => this.deps.tables.pollProgress(entry.id, this.owner, changeColumn, { changeCursor: cursor, pollHeartbeatAt: new Date(this.now()) }),
          pageRows: this.deps.pageRows ?? 5000,
          queryTimeoutMs: this.deps.queryTimeoutMs ?? 30_000,
          now: this.now,
        },
        {
          executor, table, src: entry.id, space: indexed, changeColumn, cursor: entry.changeCursor,
          rowLimit: await this.deps.rowLimit(record.userId),
          provider: entry.semantic ? this.deps.provider : null,
          columns: indexedColumns(table, [...(entry.filterableColumns ?? []), ...(entry.sortableColumns ?? [])]),
          signal,
        },
      );
      if (outcome.status !== 'done') {
        // Lost: another process holds the table now. Stopped: handed back, its cursor kept.
        if (outcome.status === 'stopped') await this.deps.tables.releasePolls([entry.id], this.owner);
        return;
      }
      if (outcome.written + outcome.deleted > 0) this.deps.onApplied(record.id, entry.tableName);
      const after = await this.deps.jobs.latest(record.id, entry.tableName);
      const overlapped = after?.startedAt && after.startedAt.getTime() <= this.now()
        && (after.status === 'running' || (after.finishedAt?.getTime() ?? 0) >= started);
      if (overlapped) {
        // The sync may have written copies of rows older than this poll's: read the same range again next time.
        return await release({ changeCursor: entry.changeCursor });
      }
      await this.folds.wrote(space, indexed, outcome.written);
      const rows = outcome.written + outcome.deleted > 0 ? { rows: await indexed.countRows(entry.id) } : {};
      await release({ changeCursor: outcome.cursor, changesAsOf: new Date(started), changeError: null, ...rows });
    } catch (error) {
      if (signal.aborted && this.stopping) return await this.deps.tables.releasePolls([entry.id], this.owner);
      const stored = isIndexStorageFailure(error) ? { code: 'INDEX_UNAVAILABLE', message: "The search index's storage did not answer; the poll is tried again." } : safeError(error);
      if (stored.code === 'INTERNAL_ERROR') this.deps.logger.error({ err: error, table: entry.id }, 'poll failed');
      await release({ changeError: stored });
    }
  }

  /**
   * The source's columns changed: every row's stored fields are stale, so a full sync is queued. Polls go on from
   * the change value the table has now (the sync, which starts later, reads every row older than it); without the
   * change column, poll mode ends and says why.
   */
  private async columnsChanged(record: DatabaseConnectionRecord, entry: IndexTableRecord, table: TableSchema, executor: SqlExecutor, release: (changes?: IndexTableChanges) => Promise<void>): Promise<void> {
    if (!table.columns.some((c) => c.name === entry.changeColumn)) {
      await release({
        changeColumn: null, changeCursor: null,
        changeError: { code: 'CHANGE_COLUMN_GONE', message: `The change column "${entry.changeColumn}" is no longer in the table; the table follows full syncs until another is named.` },
      });
    } else {
      const change = executor.quoteIdent(entry.changeColumn!);
      const asText = executor.engine === 'mysql' ? `CAST(MAX(${change}) AS CHAR)` : `CAST(MAX(${change}) AS TEXT)`;
      const [row] = await executor.query<{ m: unknown }>(`SELECT ${asText} AS m FROM ${qualifiedName(executor, table)}`, [], { timeoutMs: this.deps.queryTimeoutMs ?? 30_000 });
      const max = row?.m === null || row?.m === undefined ? null : JSON.stringify(String(row.m));
      await release({ changeCursor: max, changeError: null });
    }
    await this.deps.reconcile(record, entry.tableName);
  }
}

/** The table's column names as the source has them now (information_schema: one cheap query per poll). */
async function liveColumns(executor: SqlExecutor, table: TableSchema, timeoutMs: number): Promise<string[]> {
  const sql = executor.engine === 'mysql'
    ? 'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position'
    : 'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position';
  const params = executor.engine === 'mysql' ? [table.name] : [table.schema ?? 'public', table.name];
  return (await executor.query<{ name: string; NAME?: string }>(sql, params, { timeoutMs })).map((row) => String(row.name ?? row.NAME));
}

function sameColumns(table: TableSchema, live: string[]): boolean {
  const known = table.columns.map((c) => c.name);
  return live.length === known.length && [...live].sort().join('\u0000') === [...known].sort().join('\u0000');
}
