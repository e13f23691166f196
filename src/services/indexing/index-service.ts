/**
 * The operations of the Indexing tag (getDatabaseIndex, syncDatabaseIndex, getIndexedTable, updateIndexedTable,
 * cancelIndexSync) and the deprecated semantic-index ones. What keeps the index in step with the connections and the
 * schedule is src/search-index (upkeep.ts, schedule.ts); the response shapes are index-views.ts.
 *
 * Owner-scoped like every database operation: another user's connection is the same 404 as an unknown one.
 */
import type { components } from '../../../generated/openapi.js';
import type { TableSchema } from '../../connectors/index.js';
import { AppError, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord, IndexJobRepository } from '../../repositories/index-job-repository.js';
import type { IndexTableChanges, IndexTableRecord, IndexTableRepository } from '../../repositories/index-table-repository.js';
import type { UserCaller } from '../callers.js';
import { contentTables, indexableProblem, tableId } from '../../search-index/documents.js';
import { eligibleColumns } from '../../search-index/filter-columns.js';
import { spaceName, type IndexStore } from '../../search-index/index-store.js';
import { isIndexStorageFailure } from '../../search-index/storage-failures.js';
import { findTable, type JobPump, type SyncQueue } from '../../search-index/sync-queue.js';
import { jobView, semanticJobView, tableView } from './index-views.js';
import type { ConnectionCatalog } from '../../search-core/connection-catalog.js';

type IndexJob = components['schemas']['IndexJob'];
type IndexedTable = components['schemas']['IndexedTable'];
type DatabaseIndex = components['schemas']['DatabaseIndexResponse']['data'];
type SemanticIndexJob = components['schemas']['SemanticIndexJob'];

export interface IndexServiceDeps {
  owned(userId: string, databaseId: string): Promise<DatabaseConnectionRecord>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  /** Rows per table the owner's plan indexes. */
  rowLimit(userId: string): Promise<number>;
  tables: IndexTableRepository;
  jobs: IndexJobRepository;
  store: Pick<IndexStore, 'spaceSize'>;
  runner: Pick<JobPump, 'abort'>;
  /** Which tables the index takes, their syncs queued, tables taken out: what every way of syncing shares. */
  queue: Pick<SyncQueue, 'enqueue' | 'keepIndexable'>;
  /** The embedding model semantic tables are indexed with. */
  providerId: string;
  /**
   * Stream mode's side on the source: the WAL bytes the connection's slot keeps (null: no slot), and ending the
   * connection's stream with its slot and publication dropped (best effort: what failed, in words to show).
   */
  streams?: { lagBytes(record: DatabaseConnectionRecord, changeCursor: string | null): Promise<number | null>; drop(record: DatabaseConnectionRecord): Promise<string[]> };
  now?: () => number;
}

export class IndexService {
  private readonly now: () => number;

  constructor(private readonly deps: IndexServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * getDatabaseIndex: every table of the connection, indexed or not, with its state and newest job, and the size of
   * the account's index in the connection's environment.
   */
  async overview(caller: UserCaller, databaseId: string): Promise<DatabaseIndex> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const [schema, indexed, jobs, rowLimit, size] = await Promise.all([
      this.deps.catalog.tables(record),
      this.deps.tables.listByConnections([record.id]),
      this.deps.jobs.latestByConnections([record.id]),
      this.deps.rowLimit(record.userId),
      // The index's storage down is no reason to hide the tables' states: only the size is unknown then.
      this.deps.store.spaceSize(spaceName(record.userId, record.environment)).catch((error: unknown) => {
        if (!isIndexStorageFailure(error)) throw error;
        return null;
      }),
    ]);
    const lagBytes = await this.streamLagBytes(record, indexed);
    return {
      databaseId: record.id,
      enabled: record.indexEnabled,
      accountIndex: size && { environment: record.environment, ...size },
      syncIntervalMinutes: record.syncIntervalMinutes,
      nextSyncAt: record.indexEnabled && record.syncIntervalMinutes !== null ? (record.nextSyncAt?.toISOString() ?? null) : null,
      rowLimit,
      tables: contentTables(schema).map((table) => this.tableView(record, table, indexed, jobs, rowLimit, lagBytes)),
    };
  }

  /**
   * How far the source is ahead of the stream, in bytes, when a table of the connection streams (null when none does,
   * or unknown). The connection's tables share one stream and its position (any streamed table's cursor).
   */
  private async streamLagBytes(record: DatabaseConnectionRecord, indexed: IndexTableRecord[]): Promise<number | null> {
    const streamed = indexed.filter((t) => t.changeStream);
    if (!this.deps.streams || streamed.length === 0) return null;
    const cursor = streamed.map((t) => t.changeCursor).find((c) => c !== null) ?? null;
    return this.deps.streams.lagBytes(record, cursor).catch(() => null);
  }

  /** getIndexedTable */
  async table(caller: UserCaller, databaseId: string, name: string): Promise<IndexedTable> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.schemaTable(record, name);
    const [indexed, job, rowLimit] = await Promise.all([
      this.deps.tables.find(record.id, tableId(table)),
      this.deps.jobs.latest(record.id, tableId(table)),
      this.deps.rowLimit(record.userId),
    ]);
    const entries = indexed ? [indexed] : [];
    return this.tableView(record, table, entries, job ? [job] : [], rowLimit, await this.streamLagBytes(record, entries));
  }

  /** syncDatabaseIndex: queues a sync of the named tables (default: every indexable one); live jobs are reused. */
  async sync(caller: UserCaller, databaseId: string, names: string[] | undefined): Promise<{ jobs: IndexJob[] }> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    if (!record.indexEnabled) {
      throw new AppError('CONFLICT', `Indexing is off for this connection: turn it on (PUT /api/v1/databases/${databaseId} with {"indexing": {"enabled": true}}) to sync it.`, { databaseId });
    }
    const schema = await this.deps.catalog.tables(record, true);
    const named = (names ?? []).map((name, i) => {
      const table = findTable(schema, name);
      if (!table) throw this.noSuchTable(name);
      const problem = indexableProblem(table);
      if (problem) throw validationError([{ location: 'body', path: `/tables/${i}`, message: `names a table that ${problem}` }]);
      return table;
    });
    const indexable = await this.deps.queue.keepIndexable(record, schema, named);
    const jobs = await this.deps.queue.enqueue(record, named.length > 0 ? named : indexable, 'manual');
    return { jobs: jobs.map((job) => this.jobView(job)) };
  }

  /**
   * updateIndexedTable: settings of one table's index. Semantic search turned on, or other filterable or sortable
   * columns, need the rows written again: a sync is queued.
   */
  async updateTable(
    caller: UserCaller,
    databaseId: string,
    name: string,
    input: { semantic?: boolean; filterableColumns?: string[]; sortableColumns?: string[]; changeColumn?: string | null; pollIntervalSeconds?: number; mode?: 'stream' | 'poll' | 'snapshot' },
  ): Promise<IndexedTable> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.schemaTable(record, name);
    const problem = indexableProblem(table);
    if (problem) throw validationError([{ location: 'path', path: '/table', message: `names a table that ${problem}` }]);
    const eligible = new Set(eligibleColumns(table).map((c) => c.column));
    for (const field of ['filterableColumns', 'sortableColumns'] as const) {
      const wrong = (input[field] ?? []).findIndex((column) => !eligible.has(column));
      if (wrong >= 0) {
        throw validationError([{
          location: 'body', path: `/${field}/${wrong}`,
          message: `names "${input[field]![wrong]}", which is not a number, date, boolean or text column of the table (eligible: ${[...eligible].join(', ') || 'none'})`,
        }]);
      }
    }
    this.checkChangeColumn(record, table, input.changeColumn);
    this.checkMode(record, input);
    const indexed = await this.deps.tables.ensure(record.id, tableId(table), () => newId('itb'));
    const pollChanges = this.pollChanges(indexed, input);
    const polling = { ...pollChanges, ...(await this.streamChanges(record, { ...indexed, ...pollChanges }, input.mode)) };
    const same = (a: string[] | null | undefined, b: string[] | undefined) => b === undefined || JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...b].sort());
    const changes = {
      ...(input.semantic !== undefined && input.semantic !== indexed.semantic && { semantic: input.semantic }),
      ...(!same(indexed.filterableColumns, input.filterableColumns) && { filterableColumns: [...new Set(input.filterableColumns)] }),
      ...(!same(indexed.sortableColumns, input.sortableColumns) && { sortableColumns: [...new Set(input.sortableColumns)] }),
    };
    if (Object.keys(changes).length + Object.keys(polling).length > 0) {
      await this.deps.tables.update(indexed.id, { ...changes, ...polling });
      const rewrite = changes.semantic === true || 'filterableColumns' in changes || 'sortableColumns' in changes;
      if (rewrite && record.indexEnabled) await this.deps.queue.enqueue(record, [table], 'settings');
    }
    return this.table(caller, databaseId, name);
  }

  /**
   * A change column must be a number or date column of a PostgreSQL or MySQL/MariaDB table: its values are read in
   * order and compared with the last one read. An SQLite file is replaced whole by an upload, which syncs it.
   */
  private checkChangeColumn(record: DatabaseConnectionRecord, table: TableSchema, column: string | null | undefined): void {
    if (column === undefined || column === null) return;
    const wrong = (message: string) => validationError([{ location: 'body', path: '/changeColumn', message }]);
    if (record.engine === 'sqlite') throw wrong('is for PostgreSQL and MySQL/MariaDB connections; an SQLite file is synced again whenever it is uploaded');
    const orderable = eligibleColumns(table).filter((c) => c.kind === 'number' || c.kind === 'date').map((c) => c.column);
    if (!table.columns.some((c) => c.name === column)) throw wrong(`names "${column}", which is not a column of the table (orderable: ${orderable.join(', ') || 'none'})`);
    if (!orderable.includes(column)) throw wrong(`names "${column}", which is not a number or date column of the table (orderable: ${orderable.join(', ') || 'none'})`);
  }

  /**
   * Stream mode follows PostgreSQL's logical replication or a MySQL/MariaDB binary log: SQLite is refused, and
   * `poll` needs a change column (named now or before).
   */
  private checkMode(record: DatabaseConnectionRecord, input: { mode?: string; changeColumn?: string | null }): void {
    const wrong = (message: string) => validationError([{ location: 'body', path: '/mode', message }]);
    if (input.mode === 'stream' && record.engine === 'sqlite') {
      throw wrong('is "stream", which reads PostgreSQL\'s logical replication or a MySQL/MariaDB binary log; this SQLite connection can follow a change column (mode "poll") or full syncs');
    }
    if (input.mode === 'poll' && input.changeColumn === null) throw wrong('is "poll", which needs a change column (changeColumn is null)');
  }

  /**
   * What a change of mode writes. Turning stream mode on starts from the slot made then (the streamer reconciles
   * the table); turning it off ends the stream and, when no other table of the connection streams, drops its slot
   * and publication (what could not be dropped is shown in the table's last error).
   */
  private async streamChanges(record: DatabaseConnectionRecord, indexed: IndexTableRecord, mode: 'stream' | 'poll' | 'snapshot' | undefined): Promise<IndexTableChanges> {
    if (mode === 'poll' && !indexed.changeColumn) throw validationError([{ location: 'body', path: '/mode', message: 'is "poll", which needs a change column: name one in changeColumn' }]);
    if (mode === 'snapshot' && !indexed.changeStream) return indexed.changeColumn ? { changeColumn: null, changeCursor: null, changesAsOf: null, changeError: null } : {};
    if (mode === undefined || (mode === 'stream') === indexed.changeStream) return {};
    if (mode === 'stream') return { changeStream: true, changeCursor: null, changesAsOf: null, changeError: null, nextPollAt: new Date(this.now()), pollOwner: null, pollHeartbeatAt: null };
    const others = (await this.deps.tables.listByConnections([record.id])).filter((t) => t.changeStream && t.id !== indexed.id);
    await this.deps.tables.update(indexed.id, { changeStream: false, changeCursor: null, changesAsOf: null, changeError: null });
    const problems = others.length === 0 && this.deps.streams ? await this.deps.streams.drop(record) : [];
    return {
      changeStream: false,
      ...(mode === 'snapshot' && { changeColumn: null }),
      changeError: problems.length > 0 ? { code: 'STREAM_NOT_DROPPED', message: problems.join(' ') } : null,
    };
  }

  /** What a change of poll settings writes: another column starts from scratch (its first poll reads every row). */
  private pollChanges(indexed: IndexTableRecord, input: { changeColumn?: string | null; pollIntervalSeconds?: number }): IndexTableChanges {
    const changes: IndexTableChanges = {};
    if (input.changeColumn !== undefined && input.changeColumn !== indexed.changeColumn) {
      Object.assign(changes, { changeColumn: input.changeColumn, changeCursor: null, changesAsOf: null, changeError: null, nextPollAt: new Date(this.now()) });
    }
    if (input.pollIntervalSeconds !== undefined && input.pollIntervalSeconds !== indexed.pollIntervalSeconds) changes.pollIntervalSeconds = input.pollIntervalSeconds;
    return changes;
  }

  /** cancelIndexSync: stops the table's queued or running sync; rows already written stay searchable. */
  async cancel(caller: UserCaller, databaseId: string, name: string): Promise<IndexJob> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.schemaTable(record, name);
    const job = await this.deps.jobs.latest(record.id, tableId(table));
    if (!job) throw new AppError('NOT_FOUND', `The table "${name}" has never been synced.`, { resource: 'indexJob', id: name });
    if (!(await this.deps.jobs.cancel(job.id, new Date(this.now())))) {
      throw new AppError('CONFLICT', `The table's latest sync is ${job.status}; there is nothing to cancel.`, { jobId: job.id, status: job.status });
    }
    this.deps.runner.abort(job.id);
    return this.jobView((await this.deps.jobs.findById(job.id)) ?? job);
  }

  /**
   * startSemanticIndex (deprecated: updateIndexedTable with semantic on): turns semantic search on for the table and
   * returns the sync that embeds it — a new one (created), or the table's sync already under way.
   */
  async startSemantic(caller: UserCaller, databaseId: string, name: string): Promise<{ created: boolean; job: SemanticIndexJob }> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.schemaTable(record, name);
    const problem = indexableProblem(table);
    if (problem) throw validationError([{ location: 'body', path: '/table', message: `names a table that ${problem}` }]);
    const indexed = await this.deps.tables.ensure(record.id, tableId(table), () => newId('itb'));
    if (!indexed.semantic) await this.deps.tables.update(indexed.id, { semantic: true });
    const live = await this.deps.jobs.findLive(record.id, tableId(table));
    if (live) return { created: false, job: await this.semanticView(live) };
    const [job] = await this.deps.queue.enqueue(record, [table], 'settings');
    return { created: true, job: await this.semanticView(job!) };
  }

  /** getSemanticIndexStatus (deprecated: getIndexedTable): the table's newest sync in the older shape. */
  async semanticStatus(caller: UserCaller, databaseId: string, name: string): Promise<SemanticIndexJob> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.schemaTable(record, name);
    const job = await this.deps.jobs.latest(record.id, tableId(table));
    if (!job) throw new AppError('NOT_FOUND', `The table "${name}" has never been synced.`, { resource: 'semanticIndex', id: name });
    return this.semanticView(job);
  }

  /** cancelSemanticIndex (deprecated: cancelIndexSync), in the older shape. */
  async cancelSemantic(caller: UserCaller, databaseId: string, name: string): Promise<SemanticIndexJob> {
    const cancelled = await this.cancel(caller, databaseId, name);
    return this.semanticView((await this.deps.jobs.findById(cancelled.jobId))!);
  }

  private async semanticView(job: IndexJobRecord): Promise<SemanticIndexJob> {
    const entry = await this.deps.tables.find(job.connectionId, job.tableName);
    return semanticJobView(this.jobView(job), entry, this.deps.providerId);
  }

  /** The indexed tables of these connections (with what search needs to know about them). */
  async indexedTables(connectionIds: string[]): Promise<{ tables: IndexTableRecord[]; liveJobs: IndexJobRecord[] }> {
    const [tables, liveJobs] = await Promise.all([this.deps.tables.listByConnections(connectionIds), this.deps.jobs.liveByConnections(connectionIds)]);
    return { tables, liveJobs };
  }

  private async schemaTable(record: DatabaseConnectionRecord, name: string): Promise<TableSchema> {
    const table = findTable(await this.deps.catalog.tables(record), name);
    if (!table) throw this.noSuchTable(name);
    return table;
  }

  private noSuchTable(name: string): AppError {
    return new AppError('NOT_FOUND', `No table "${name}" in this database's schema (refresh the schema if it is new).`, { resource: 'table', id: name });
  }

  private tableView(record: DatabaseConnectionRecord, table: TableSchema, indexed: IndexTableRecord[], jobs: IndexJobRecord[], rowLimit: number, streamLagBytes: number | null = null): IndexedTable {
    return tableView({ record, table, indexed, jobs, rowLimit, streamLagBytes, providerId: this.deps.providerId, now: this.now() });
  }

  private jobView(job: IndexJobRecord): IndexJob {
    return jobView(job, this.now());
  }
}
