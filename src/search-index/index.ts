/**
 * Quarry's own search index (issue 27): the public surface of this folder and its wiring, made once per server by the
 * composition root. Every connected table with a primary key and text columns is synced into it in the background
 * (when connected, on demand, and on each connection's schedule); natural, semantic and hybrid search read it.
 */
import type { TableSchema, SqlExecutor } from '../connectors/index.js';
import type { Config } from '../config/config.js';
import type { EmbeddingProvider } from '../embeddings/index.js';
import type { Logger } from '../lib/logger.js';
import type { TierName } from '../rate-limit/index.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../repositories/database-connection-repository.js';
import { indexJobRepository } from '../repositories/index-job-repository.js';
import { indexTableRepository } from '../repositories/index-table-repository.js';
import { IndexStore } from './index-store.js';
import { IndexJobRunner } from './job-runner.js';
import { IndexService } from '../services/indexing/index-service.js';

export { IndexService, findTable } from '../services/indexing/index-service.js';
export { IndexStore, spaceName } from './index-store.js';

/**
 * Rows of one table the index holds, by the owner's plan. Rows past the limit, in primary key order, are left out
 * and the table says so (`truncated`).
 */
export const INDEX_ROWS_PER_TABLE: Readonly<Record<TierName, number>> = Object.freeze({
  free: 10_000,
  pro: 100_000,
  enterprise: 1_000_000,
});

/** How often each process looks for connections whose scheduled sync is due. */
const SCHEDULE_POLL_MS = 60_000;

export interface SearchIndexDeps {
  config: Pick<Config, 'index' | 'searchTimeoutMs'>;
  logger: Logger;
  provider: EmbeddingProvider;
  databases: {
    owned(userId: string, databaseId: string): Promise<DatabaseConnectionRecord>;
    executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
    tablesOf(record: DatabaseConnectionRecord, fresh?: boolean): Promise<TableSchema[]>;
  };
  connections: Pick<DatabaseConnectionRepository, 'dueForSync' | 'claimScheduledSync' | 'findById'>;
  /** The owner's plan: it decides how many rows per table are indexed. */
  planOf(userId: string): Promise<TierName>;
  /** A connection's indexed rows changed: cached answers that read them are stale. */
  onIndexChanged(connectionId: string): void;
  now?: () => number;
}

/** The index's store, job runner, service and schedule; `start` once the server is up, `stop` before the store closes. */
export function createSearchIndex(deps: SearchIndexDeps) {
  const store = new IndexStore({ uri: deps.config.index.uri, readConsistencySeconds: deps.config.index.readConsistencyMs / 1000 });
  const runner = new IndexJobRunner({
    jobs: indexJobRepository,
    tables: indexTableRepository,
    store,
    provider: deps.provider,
    findConnection: (id) => deps.connections.findById(id),
    executorFor: (record) => deps.databases.executorFor(record),
    tablesOf: (record) => deps.databases.tablesOf(record),
    logger: deps.logger,
    onSynced: (connectionId) => deps.onIndexChanged(connectionId),
    maxActive: deps.config.index.maxJobs,
    sync: { queryTimeoutMs: Math.max(deps.config.searchTimeoutMs, 30_000) },
    now: deps.now,
  });
  const syncing = deps.config.index.sync;
  const service = new IndexService({
    owned: (userId, databaseId) => deps.databases.owned(userId, databaseId),
    tablesOf: (record, fresh) => deps.databases.tablesOf(record, fresh),
    rowLimit: async (userId) => INDEX_ROWS_PER_TABLE[await deps.planOf(userId)],
    connections: deps.connections,
    tables: indexTableRepository,
    jobs: indexJobRepository,
    store,
    // A process that does not sync leaves queued jobs to those that do.
    runner: syncing ? runner : { pump: async () => undefined, abort: () => undefined, abortConnection: () => undefined },
    providerId: deps.provider.id,
    onIndexChanged: deps.onIndexChanged,
    onError: (error) => deps.logger.warn({ err: error }, 'scheduled index sync could not be queued'),
    now: deps.now,
  });
  let schedule: NodeJS.Timeout | null = null;
  return {
    store,
    runner,
    service,
    /** Resumes jobs left by a stopped or crashed process, starts the runner and the schedule (when this process syncs). */
    start(): void {
      if (!syncing) return;
      runner.start();
      const tick = () => void service.runSchedule().catch((error) => deps.logger.warn({ err: error }, 'index schedule'));
      schedule = setInterval(tick, SCHEDULE_POLL_MS);
      schedule.unref();
      tick();
    },
    /** Graceful stop: running jobs are queued again for the next start. */
    async stop(): Promise<void> {
      if (schedule) clearInterval(schedule);
      schedule = null;
      await runner.stop();
      await store.close();
    },
  };
}

export type SearchIndex = ReturnType<typeof createSearchIndex>;
