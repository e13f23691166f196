/**
 * Runs index sync jobs in the background. The store is the queue: a job is claimed with a conditional
 * update, kept alive by a heartbeat, and claimed again by any process once its heartbeat is stale (its process
 * died). At most one job per search space runs anywhere, so one process writes a space at a time. A graceful stop
 * hands running jobs back as queued, so the next start resumes them from their cursor.
 */
import { isConnectorError, type SqlExecutor, type TableSchema } from '../connectors/index.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../lib/ids.js';
import { Chores } from '../lib/chores.js';
import type { Logger } from '../lib/logger.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import type { IndexJobRecord, IndexJobRepository, NewIndexJob } from '../repositories/index-job-repository.js';
import type { IndexTableRecord, IndexTableRepository } from '../repositories/index-table-repository.js';
import { EmbeddingError, type EmbeddingProvider } from '../embeddings/provider.js';
import { tableId } from './documents.js';
import { chosenColumns, columnsReady, indexedColumns } from './filter-columns.js';
import type { IndexStore } from './index-store.js';
import { isIndexStorageFailure } from './storage-failures.js';
import { runSyncJob, type SyncDeps, type SyncOutcome } from './sync-job.js';
import type { ConnectionCatalog } from '../search-core/connection-catalog.js';

export interface JobRunnerDeps {
  jobs: IndexJobRepository;
  tables: Pick<IndexTableRepository, 'find' | 'update'>;
  store: Pick<IndexStore, 'ensureSpace' | 'cleanUp'>;
  provider: EmbeddingProvider;
  findConnection(id: string): Promise<DatabaseConnectionRecord | null>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Called when a table's index changed (a sync finished), so cached answers that read it are dropped. */
  onSynced(connectionId: string, tableName: string): void;
  now?: () => number;
  /** Jobs this process runs at once (each in its own space). */
  maxActive?: number;
  /** Claims of a job before it ends failed (its process died each time it ran). */
  maxAttempts?: number;
  sync?: Partial<Omit<SyncDeps, 'jobs' | 'now'>>;
  /** A running job whose heartbeat is older than this belongs to a process that is gone (INDEX_SYNC_STALE_MS). */
  staleMs?: number;
  /** How often a running job's heartbeat is written; by default from `staleMs` (takeoverTimings). */
  heartbeatMs?: number;
  /** How often the store is checked for claimable jobs (queued elsewhere, or orphaned); by default from `staleMs`. */
  pollMs?: number;
  /**
   * How long a version of a space is kept once a newer one is written (INDEX_KEEP_VERSIONS_MS): the versions a sync
   * wrote are removed this long after it ends. Absent: left to the cleanup schedule.
   */
  keepVersionsMs?: number;
}

/** Time after the versions a sync wrote become old before they are removed: a margin for clocks and timers. */
const CLEANUP_MARGIN_MS = 1000;

/** A sync job whose process has not written its heartbeat for this long is taken over by another (INDEX_SYNC_STALE_MS). */
export const DEFAULT_STALE_MS = 10_000;

/**
 * The heartbeat and poll that go with a staleness: a job's process writes its heartbeat five times per `staleMs`, so
 * four in a row may be late (a busy machine, a slow store write) before another process takes the job; the others
 * look for such jobs four times per `staleMs`. A job whose process dies is claimed again at most `staleMs` after its
 * last heartbeat plus one poll (`takeoverWithinMs`): 12.5 s by default. Heartbeats are written with the clock of the
 * process that runs the job and read with the clock of the one that claims it: machines' clocks must agree to well
 * within `staleMs` (NTP does).
 */
export function takeoverTimings(staleMs = DEFAULT_STALE_MS): { staleMs: number; heartbeatMs: number; pollMs: number; takeoverWithinMs: number } {
  const heartbeatMs = Math.round(staleMs / 5);
  const pollMs = Math.round(staleMs / 4);
  return { staleMs, heartbeatMs, pollMs, takeoverWithinMs: staleMs + pollMs };
}

interface ActiveJob {
  job: IndexJobRecord;
  abort: AbortController;
  finished: Promise<void>;
}

/** A job's error as stored: stable code, words safe to show. */
function safeError(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  if (isConnectorError(error)) return error.toSafeError();
  if (error instanceof EmbeddingError) return { code: 'EMBEDDING_FAILED', message: error.message };
  return { code: 'INTERNAL_ERROR', message: 'The sync failed unexpectedly; start it again to resume.' };
}

export class IndexJobRunner {
  private readonly active = new Map<string, ActiveJob>();
  private readonly now: () => number;
  private readonly chores: Chores;
  /** A space's removal of the versions its last sync wrote, due once they are old (one per space). */
  private readonly cleanups = new Map<string, NodeJS.Timeout>();
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private stopping = false;
  /** The index's store failed a job: nothing is claimed before this time. */
  private waitUntil = 0;

  constructor(private readonly deps: JobRunnerDeps) {
    this.now = deps.now ?? Date.now;
    this.chores = new Chores(deps.logger, 'index job runner');
  }

  /** Starts the heartbeat and the poll, and claims what is waiting (jobs left by a stopped or crashed process). */
  start(): void {
    this.stopping = false;
    const timings = takeoverTimings(this.deps.staleMs);
    this.chores.every(this.deps.heartbeatMs ?? timings.heartbeatMs, () => this.deps.jobs.touch([...this.active.keys()], new Date(this.now())));
    this.chores.every(this.deps.pollMs ?? timings.pollMs, () => this.pump());
    void this.pump();
  }

  /** Claims and starts jobs while there is room. Concurrent calls coalesce into one more round. */
  pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      do {
        this.pumpAgain = false;
        while (!this.stopping && this.active.size < (this.deps.maxActive ?? 2) && this.now() >= this.waitUntil) {
          const now = this.now();
          const job = await this.deps.jobs.claimNext(new Date(now), new Date(now - (this.deps.staleMs ?? DEFAULT_STALE_MS)), [...this.active.keys()], this.deps.maxAttempts);
          if (!job || this.stopping) {
            if (job) await this.deps.jobs.release([job.id]);
            break;
          }
          this.launch(job);
        }
      } while (this.pumpAgain && !this.stopping);
    })()
      .catch((error) => this.deps.logger.error({ err: error }, 'claiming index jobs failed'))
      .finally(() => {
        this.pumping = null;
      });
    return this.pumping;
  }

  /** Stops a job running here (its status was already set to cancelled in the store). */
  abort(jobId: string): void {
    this.active.get(jobId)?.abort.abort();
  }

  /**
   * Stops every job of a connection running here (it was deleted, or its data replaced); resolves once they have
   * ended, so nothing they read is written to the index afterwards.
   */
  async abortConnection(connectionId: string): Promise<void> {
    const running = [...this.active.values()].filter((active) => active.job.connectionId === connectionId);
    for (const active of running) active.abort.abort();
    await Promise.all(running.map((active) => active.finished));
  }

  /** A job of this search space runs in this process (its writes and a poll's take turns on the space's lock). */
  runsSpace(space: string): boolean {
    return [...this.active.values()].some((active) => active.job.space === space);
  }

  /** Resolves when no job runs here and none is being claimed (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.active.size > 0 || this.pumping) {
      await Promise.all([...this.active.values()].map((active) => active.finished));
      await this.pumping;
    }
  }

  /** Graceful stop: aborts between pages, waits, and queues the unfinished jobs again for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.chores.stop();
    for (const timer of this.cleanups.values()) clearTimeout(timer);
    this.cleanups.clear();
    await this.pumping;
    const running = [...this.active.values()];
    for (const active of running) active.abort.abort();
    await Promise.all(running.map((active) => active.finished));
    await this.deps.jobs.release(running.map((active) => active.job.id));
  }

  private launch(job: IndexJobRecord): void {
    const abort = new AbortController();
    const active: ActiveJob = { job, abort, finished: Promise.resolve() };
    this.active.set(job.id, active);
    active.finished = this.run(job, abort.signal)
      .then(() => undefined)
      .finally(() => {
        this.active.delete(job.id);
        if (!this.stopping) void this.pump();
      });
  }

  private async run(job: IndexJobRecord, signal: AbortSignal): Promise<SyncOutcome['status'] | 'failed'> {
    try {
      const record = await this.deps.findConnection(job.connectionId);
      const indexed = record ? await this.deps.tables.find(job.connectionId, job.tableName) : null;
      if (!record || !indexed) {
        // The connection was deleted or the table left the index: the job ends here, or it would stay running and
        // hold its space until its heartbeat went stale, then be claimed (and left running) again.
        await this.deps.jobs.cancel(job.id, new Date(this.now()));
        return 'cancelled';
      }
      // Whether rows are embedded is the table's setting when the job runs, not when it was queued.
      if (job.semantic !== indexed.semantic) {
        Object.assign(job, { semantic: indexed.semantic, providerId: indexed.semantic ? this.deps.provider.id : null });
        if (!(await this.deps.jobs.progress(job.id, { semantic: job.semantic, providerId: job.providerId }))) return 'cancelled';
      }
      const table = (await this.deps.catalog.tables(record)).find((t) => tableId(t) === job.tableName);
      if (!table) throw new AppError('NOT_FOUND', `The table "${job.tableName}" is no longer in the database's schema.`, { resource: 'table', id: job.tableName });
      const space = await this.deps.store.ensureSpace(job.space);
      const outcome = await runSyncJob(
        {
          jobs: {
            progress: (id, changes) => this.deps.jobs.progress(id, changes),
            // The table is recorded as synced before its job says done: whoever sees the job done finds the table
            // searchable (by meaning too, after a semantic sync).
            finish: async (id, status, changes, next) => {
              // Searches read the space's words and headings from memory: gathered before the table says synced,
              // so the first search after it costs what every other does.
              await space.prepareVocabulary();
              await this.markSynced(indexed, job, table, { rows: await space.countRows(indexed.id), truncated: changes.truncated ?? false });
              // Caches of the table's catalog and pages are told before the job says done, for the same reason.
              this.deps.onSynced(job.connectionId, job.tableName);
              return this.deps.jobs.finish(id, status, changes, next);
            },
          },
          now: this.now,
          pageRows: this.deps.sync?.pageRows ?? 5000,
          embedPageRows: this.deps.sync?.embedPageRows ?? 64,
          queryTimeoutMs: this.deps.sync?.queryTimeoutMs ?? 30_000,
          optimizeEveryRows: this.deps.sync?.optimizeEveryRows ?? 50_000,
          writeRows: this.deps.sync?.writeRows ?? 20_000,
          followUp: () => this.followUp(indexed, job),
        },
        {
          job,
          executor: await this.deps.executorFor(record),
          table,
          src: indexed.id,
          space,
          provider: job.semantic ? this.deps.provider : null,
          columns: indexedColumns(table, [...(indexed.filterableColumns ?? []), ...(indexed.sortableColumns ?? [])]),
          signal,
        },
      );
      if (outcome.status === 'done') this.cleanUpLater(job.space);
      if (outcome.status === 'done') await this.afterSync(job);
      if (outcome.status === 'done') await this.catchUp(job);
      return outcome.status;
    } catch (error) {
      if (signal.aborted && this.stopping) return 'stopped';
      if (isIndexStorageFailure(error)) {
        // The index's store is down: the job goes back to the queue, its position kept and the attempt not counted,
        // and this process claims nothing for a while; the job resumes once the store answers again.
        this.deps.logger.warn({ err: error, jobId: job.id }, 'index storage unavailable: the sync waits and resumes');
        this.waitUntil = this.now() + (this.deps.pollMs ?? takeoverTimings(this.deps.staleMs).pollMs) * 2;
        await this.deps.jobs.release([job.id]).catch(() => undefined);
        return 'stopped';
      }
      const stored = safeError(error);
      if (stored.code === 'INTERNAL_ERROR') this.deps.logger.error({ err: error, jobId: job.id }, 'index sync job failed');
      await this.deps.jobs.finish(job.id, 'failed', { error: stored, finishedAt: new Date(this.now()) }).catch(() => undefined);
      return 'failed';
    }
  }

  /** The table is searchable from the index as of the job's start. */
  private async markSynced(indexed: IndexTableRecord, job: IndexJobRecord, table: TableSchema, outcome: { rows: number; truncated: boolean }): Promise<void> {
    await this.deps.tables.update(indexed.id, {
      rows: outcome.rows,
      truncated: outcome.truncated,
      keyColumns: table.primaryKey,
      textColumns: table.textColumns,
      vectorModel: job.semantic ? this.deps.provider.id : null,
      syncedAt: new Date(this.now()),
      syncStartedAt: job.startedAt ?? new Date(this.now()),
      syncedColumns: chosenColumns(indexed),
    });
  }

  /**
   * Every write of a sync made a version of the space, and its last fold rewrote the rows into fewer files; the
   * older versions hold the files they replaced (as much again as the data, after a first sync) and go once no
   * reader can need them: `keepVersionsMs` after the sync, not at the schedule's next round. A space a job is
   * writing by then, in any process, is left to that job's own fold and cleanup.
   */
  private cleanUpLater(space: string): void {
    const keep = this.deps.keepVersionsMs;
    if (keep === undefined || this.stopping) return;
    clearTimeout(this.cleanups.get(space));
    const timer = setTimeout(() => {
      this.cleanups.delete(space);
      void (async () => {
        if ((await this.deps.jobs.runningSpaces()).includes(space)) return;
        await this.deps.store.cleanUp(space);
      })().catch((error: unknown) => this.deps.logger.warn({ err: error, space }, 'index cleanup after a sync failed; the schedule tries again'));
    }, keep + CLEANUP_MARGIN_MS);
    timer.unref();
    this.cleanups.set(space, timer);
  }

  /** Older jobs of the table are forgotten. */
  private async afterSync(job: IndexJobRecord): Promise<void> {
    await this.deps.jobs.pruneEnded(job.connectionId, job.tableName, [job.id]);
  }

  /**
   * Settings changed while the job ran (semantic search turned on, other filterable or sortable columns; their own
   * request found this sync under way and queued none): the sync that writes the rows with them, queued as this one ends.
   */
  private async followUp(started: IndexTableRecord, job: IndexJobRecord): Promise<NewIndexJob | null> {
    const now = await this.deps.tables.find(job.connectionId, job.tableName);
    const chosen = (record: IndexTableRecord) => JSON.stringify(chosenColumns(record));
    if (!now || !((now.semantic && !job.semantic) || chosen(now) !== chosen(started))) return null;
    return this.settingsJob(now, job);
  }

  /**
   * The same check once the job is done: a settings request that came after `followUp` looked, and found this job
   * still running, queued nothing. Whoever is second to queue gets null (one live job per table), so the sync that
   * writes the new settings is queued exactly once, by the request or here.
   */
  private async catchUp(job: IndexJobRecord): Promise<void> {
    const now = await this.deps.tables.find(job.connectionId, job.tableName);
    if (!now || (columnsReady(now) && !(now.semantic && !job.semantic))) return;
    if (await this.deps.jobs.createQueued(this.settingsJob(now, job))) void this.pump();
  }

  private settingsJob(table: IndexTableRecord, job: IndexJobRecord): NewIndexJob {
    return {
      id: newId('ijob'), connectionId: job.connectionId, tableName: job.tableName, space: job.space, trigger: 'settings',
      semantic: table.semantic, providerId: table.semantic ? this.deps.provider.id : null, rowLimit: job.rowLimit,
    };
  }
}
