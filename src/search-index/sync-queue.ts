/**
 * What every way of syncing a connection's tables shares (asked for, on a connection's change, after an upload, on
 * the schedule, after a poll found the columns changed): which tables of a schema the index takes, queuing their syncs, and taking tables out of the index.
 */
import type { TableSchema } from '../connectors/index.js';
import type { EventPublisher } from '../lib/domain-events.js';
import { newId } from '../lib/ids.js';
import type { IndexJobTrigger } from '../models/index-job.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import type { IndexJobRecord, IndexJobRepository } from '../repositories/index-job-repository.js';
import type { IndexTableRepository } from '../repositories/index-table-repository.js';
import { contentTables, indexableProblem, tableId } from './documents.js';
import { spaceName, type IndexStore } from './index-store.js';
import type { ConnectionCatalog } from '../search-core/connection-catalog.js';

/** Tables of one connection the index holds at most (as many as one search reads live). */
export const MAX_INDEXED_TABLES = 50;

/** What runs the queued jobs; a process that does not sync has one that does nothing. */
export interface JobPump {
  pump(): Promise<void>;
  abort(jobId: string): void;
  abortConnection(connectionId: string): Promise<void>;
}

/** The pump of a process that does not sync (INDEX_SYNC off): it leaves queued jobs to the processes that do. */
export const NO_PUMP: JobPump = { pump: async () => undefined, abort: () => undefined, abortConnection: async () => undefined };

export interface SyncQueueDeps {
  tables: Pick<IndexTableRepository, 'ensure' | 'removeExcept'>;
  jobs: Pick<IndexJobRepository, 'findLive' | 'createQueued' | 'cancelTables'>;
  store: Pick<IndexStore, 'space'>;
  runner: JobPump;
  /** Rows per table the owner's plan indexes. */
  rowLimit(userId: string): Promise<number>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  /** The embedding model semantic tables are indexed with. */
  providerId: string;
  /** Tells every process that a connection's rows left the index (cached answers that read them are stale). */
  events: EventPublisher;
  now?: () => number;
}

/** A table of the schema by the name a caller gave: exact first, then case-insensitive (`schema.table` allowed). */
export function findTable(tables: TableSchema[], name: string): TableSchema | null {
  const lower = name.toLowerCase();
  return tables.find((t) => tableId(t) === name) ?? tables.find((t) => tableId(t).toLowerCase() === lower) ?? null;
}

export class SyncQueue {
  private readonly now: () => number;

  constructor(private readonly deps: SyncQueueDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The tables of a schema the index takes: content tables that can be indexed, at most MAX_INDEXED_TABLES. */
  indexable(schema: TableSchema[]): TableSchema[] {
    return contentTables(schema).filter((table) => indexableProblem(table) === null).slice(0, MAX_INDEXED_TABLES);
  }

  /**
   * The one rule of every sync that reads the schema afresh (asked for, scheduled, or after an upload): tables the
   * schema no longer has, or that can no longer be indexed, leave the index (a table named in the request stays);
   * the indexable ones are returned.
   */
  async keepIndexable(record: DatabaseConnectionRecord, schema: TableSchema[], named: TableSchema[] = []): Promise<TableSchema[]> {
    const indexable = this.indexable(schema);
    await this.dropTablesNotIn(record, [...indexable, ...named].map(tableId));
    return indexable;
  }

  /** Registers the tables in the index and queues a sync of each (a live job is returned as it is). */
  async enqueue(record: DatabaseConnectionRecord, tables: TableSchema[], trigger: IndexJobTrigger): Promise<IndexJobRecord[]> {
    const rowLimit = await this.deps.rowLimit(record.userId);
    const space = spaceName(record.userId, record.environment);
    const jobs: IndexJobRecord[] = [];
    for (const table of tables) {
      const name = tableId(table);
      const indexed = await this.deps.tables.ensure(record.id, name, () => newId('itb'));
      const job = await this.deps.jobs.findLive(record.id, name) ?? await this.deps.jobs.createQueued({
        id: newId('ijob'), connectionId: record.id, tableName: name, space, trigger,
        semantic: indexed.semantic, providerId: indexed.semantic ? this.deps.providerId : null, rowLimit,
      }) ?? await this.deps.jobs.findLive(record.id, name);
      if (job) jobs.push(job);
    }
    if (jobs.length > 0) void this.deps.runner.pump();
    return jobs;
  }

  /** A poll found the table's columns changed: every row is read again by a full sync (queued unless one is live). */
  async reconcile(record: DatabaseConnectionRecord, tableName: string): Promise<void> {
    const table = findTable(await this.deps.catalog.tables(record), tableName);
    if (table && record.indexEnabled) await this.enqueue(record, [table], 'reconcile');
  }

  /** Every table of the connection leaves the index: its jobs stop and its rows are deleted. */
  async removeRows(record: DatabaseConnectionRecord): Promise<void> {
    await this.deps.runner.abortConnection(record.id);
    await this.dropTablesNotIn(record, []);
  }

  /** Tables of the connection not in `keep` leave the index: their jobs are cancelled and their rows deleted. */
  private async dropTablesNotIn(record: DatabaseConnectionRecord, keep: string[]): Promise<void> {
    const gone = await this.deps.tables.removeExcept(record.id, keep);
    if (gone.length === 0) return;
    for (const id of await this.deps.jobs.cancelTables(record.id, gone.map((t) => t.tableName), new Date(this.now()))) this.deps.runner.abort(id);
    const space = await this.deps.store.space(spaceName(record.userId, record.environment));
    await space?.deleteSources(gone.map((t) => t.id));
    this.deps.events.publish('index.synced', { databaseId: record.id });
  }
}
