/**
 * The index kept in step with the connections: every indexable table of a new connection is synced at once, a
 * changed connection is synced again, a replaced SQLite file is synced from the start, and a removed connection
 * leaves the index. The databases' services call it
 * through the lifecycle interface the composition root passes them, and wait for it: a connection's first sync is
 * queued before its creation answers, and its rows are gone before its removal does.
 */
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import { movedRows, syncsEveryTable } from '../rules/connection-changes.js';
import type { IndexJobRepository } from '../repositories/index-job-repository.js';
import type { IndexTableRepository } from '../repositories/index-table-repository.js';
import type { JobPump, SyncQueue } from './sync-queue.js';
import type { ConnectionCatalog } from '../search-core/connection-catalog.js';

export interface IndexUpkeepDeps {
  queue: Pick<SyncQueue, 'enqueue' | 'keepIndexable' | 'indexable' | 'removeRows'>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  tables: Pick<IndexTableRepository, 'listByConnections'>;
  jobs: Pick<IndexJobRepository, 'cancelConnection'>;
  runner: Pick<JobPump, 'abortConnection'>;
  /** Ending a connection's stream with its slot and publication dropped (best effort: what failed, in words). */
  streams?: { drop(record: DatabaseConnectionRecord): Promise<string[]> };
  onError(error: unknown): void;
  now?: () => number;
}

export class IndexUpkeep {
  private readonly now: () => number;

  constructor(private readonly deps: IndexUpkeepDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** A new connection: every indexable table is registered and synced at once (when indexing is on). */
  async connected(record: DatabaseConnectionRecord): Promise<void> {
    if (!record.indexEnabled) return;
    await this.deps.queue.enqueue(record, this.deps.queue.indexable(await this.deps.catalog.tables(record)), 'connect');
  }

  /**
   * A changed connection. Another environment or database means another space or other rows: the old rows leave
   * the index and every table is synced again; indexing turned off removes the rows; turned on syncs them.
   */
  async changed(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): Promise<void> {
    if (!after.indexEnabled || movedRows(before, after, reconnected)) await this.deps.queue.removeRows(before);
    if (syncsEveryTable(before, after, reconnected)) {
      await this.deps.queue.enqueue(after, this.deps.queue.indexable(await this.deps.catalog.tables(after, true)), 'settings');
    }
  }

  /**
   * The data behind a connection was replaced as a whole (an uploaded SQLite file): a queued or running sync would
   * index the old data (or end ready on it), so it is cancelled in the store, where the process running it, this one
   * or another, sees it at its next page; here it is awaited. Tables the new schema lacks leave the index and every
   * indexable table is synced again from the start: that sync rewrites changed rows and drops the rows the new file
   * does not have, so when it is done the index holds the new file's rows and no others.
   */
  async sourceReplaced(record: DatabaseConnectionRecord): Promise<void> {
    if (!record.indexEnabled) return;
    await this.deps.jobs.cancelConnection(record.id, new Date(this.now()));
    await this.deps.runner.abortConnection(record.id);
    await this.deps.queue.enqueue(record, await this.deps.queue.keepIndexable(record, await this.deps.catalog.tables(record, true)), 'upload');
  }

  /** A connection is being removed: its jobs stop and its rows leave the index (its records cascade in the store). */
  async removing(record: DatabaseConnectionRecord): Promise<void> {
    const streamed = (await this.deps.tables.listByConnections([record.id])).some((t) => t.changeStream);
    if (streamed && this.deps.streams) {
      const problems = await this.deps.streams.drop(record);
      if (problems.length > 0) this.deps.onError(new Error(problems.join(' ')));
    }
    await this.deps.queue.removeRows(record);
  }
}
