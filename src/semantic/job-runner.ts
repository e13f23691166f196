/**
 * Runs index jobs in the background. The store is the queue: a job is claimed with a conditional update, kept alive
 * by a heartbeat, and claimed again by any process once its heartbeat is stale (its process died). A graceful stop
 * hands running jobs back as queued, so the next start resumes them at once from their cursor.
 */
import { isConnectorError, type SqlExecutor, type TableSchema } from '../connectors/index.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../lib/logger.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import type { SemanticIndexJobRecord, SemanticIndexJobRepository } from '../repositories/semantic-index-job-repository.js';
import type { SemanticVectorRepository } from '../repositories/semantic-vector-repository.js';
import { runIndexJob, type IndexOutcome } from './indexer.js';
import { EmbeddingError, type EmbeddingProvider } from './provider.js';
import { tableId } from './row-text.js';

export interface JobRunnerDeps {
  jobs: SemanticIndexJobRepository;
  vectors: Pick<SemanticVectorRepository, 'existing' | 'writeBatch' | 'sweep'>;
  provider: EmbeddingProvider;
  findConnection(id: string): Promise<DatabaseConnectionRecord | null>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  tablesOf(record: DatabaseConnectionRecord): Promise<TableSchema[]>;
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Called when a job ends here in any way, so cached vectors of its table are reloaded. */
  onEnded(connectionId: string, tableName: string): void;
  now?: () => number;
  /** Jobs this process runs at once (they share one embedding model). */
  maxActive?: number;
  /** Rows per page (default 64: about 4 s of the local model on long rows, the longest a graceful stop waits). */
  pageRows?: number;
  queryTimeoutMs?: number;
  heartbeatMs?: number;
  /** A running job whose heartbeat is older than this belongs to a process that is gone. */
  staleMs?: number;
  /** How often the store is checked for claimable jobs (queued elsewhere, or orphaned). */
  pollMs?: number;
}

interface ActiveJob {
  job: SemanticIndexJobRecord;
  abort: AbortController;
  finished: Promise<void>;
}

/** A job's error as stored: stable code, words safe to show. */
function safeError(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  if (isConnectorError(error)) return error.toSafeError();
  if (error instanceof EmbeddingError) return { code: 'EMBEDDING_FAILED', message: error.message };
  return { code: 'INTERNAL_ERROR', message: 'Indexing failed unexpectedly; start it again to resume.' };
}

export class SemanticJobRunner {
  private readonly active = new Map<string, ActiveJob>();
  private readonly now: () => number;
  private timers: NodeJS.Timeout[] = [];
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private stopping = false;

  constructor(private readonly deps: JobRunnerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Starts the heartbeat and the poll, and claims what is waiting (jobs left by a stopped or crashed process). */
  start(): void {
    this.stopping = false;
    const every = (ms: number, fn: () => Promise<void>) => {
      const timer = setInterval(() => void fn().catch((error) => this.deps.logger.warn({ err: error }, 'semantic index runner')), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.deps.heartbeatMs ?? 10_000, () => this.deps.jobs.touch([...this.active.keys()], new Date(this.now())));
    every(this.deps.pollMs ?? 15_000, () => this.pump());
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
        while (!this.stopping && this.active.size < (this.deps.maxActive ?? 2)) {
          const now = this.now();
          const job = await this.deps.jobs.claimNext(new Date(now), new Date(now - (this.deps.staleMs ?? 60_000)), [...this.active.keys()]);
          if (!job || this.stopping) {
            if (job) await this.deps.jobs.release([job.id]);
            break;
          }
          this.launch(job);
        }
      } while (this.pumpAgain && !this.stopping);
    })()
      .catch((error) => this.deps.logger.error({ err: error }, 'claiming semantic index jobs failed'))
      .finally(() => {
        this.pumping = null;
      });
    return this.pumping;
  }

  /** Stops a job running here (its status was already set to cancelled in the store). */
  abort(jobId: string): void {
    this.active.get(jobId)?.abort.abort();
  }

  /** Stops every job of a connection running here (it was deleted). */
  abortConnection(connectionId: string): void {
    for (const active of this.active.values()) if (active.job.connectionId === connectionId) active.abort.abort();
  }

  /** Resolves when no job runs here (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.active.size > 0 || this.pumping) {
      await Promise.all([...this.active.values()].map((active) => active.finished));
      await this.pumping;
    }
  }

  /** Graceful stop: aborts between pages, waits, and queues the unfinished jobs again for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.pumping;
    const running = [...this.active.values()];
    for (const active of running) active.abort.abort();
    await Promise.all(running.map((active) => active.finished));
    await this.deps.jobs.release(running.map((active) => active.job.id));
  }

  private launch(job: SemanticIndexJobRecord): void {
    const abort = new AbortController();
    const active: ActiveJob = { job, abort, finished: Promise.resolve() };
    this.active.set(job.id, active);
    active.finished = this.run(job, abort.signal)
      .then((outcome) => {
        if (outcome !== 'stopped' || !this.stopping) this.deps.onEnded(job.connectionId, job.tableName);
      })
      .finally(() => {
        this.active.delete(job.id);
        if (!this.stopping) void this.pump();
      });
  }

  private async run(job: SemanticIndexJobRecord, signal: AbortSignal): Promise<IndexOutcome | 'failed'> {
    try {
      const record = await this.deps.findConnection(job.connectionId);
      if (!record) return 'cancelled'; // the connection was deleted: its jobs and vectors went with it
      const table = (await this.deps.tablesOf(record)).find((t) => tableId(t) === job.tableName);
      if (!table) throw new AppError('NOT_FOUND', `The table "${job.tableName}" is no longer in the database's schema.`, { resource: 'table', id: job.tableName });
      const outcome = await runIndexJob(
        {
          jobs: this.deps.jobs,
          vectors: this.deps.vectors,
          provider: this.deps.provider,
          now: this.now,
          pageRows: this.deps.pageRows ?? 64,
          queryTimeoutMs: this.deps.queryTimeoutMs ?? 30_000,
        },
        { job, executor: await this.deps.executorFor(record), table, signal },
      );
      if (outcome === 'done') await this.deps.jobs.pruneEnded(job.connectionId, job.tableName, [job.id]);
      return outcome;
    } catch (error) {
      if (signal.aborted && this.stopping) return 'stopped';
      const stored = safeError(error);
      if (stored.code === 'INTERNAL_ERROR') this.deps.logger.error({ err: error, jobId: job.id }, 'semantic index job failed');
      await this.deps.jobs.finish(job.id, 'failed', { error: stored, finishedAt: new Date(this.now()) }).catch(() => undefined);
      return 'failed';
    }
  }
}
