/**
 * The search index of a connection's tables: the operations of the Indexing tag (getDatabaseIndex,
 * syncDatabaseIndex, getIndexedTable, updateIndexedTable, cancelIndexSync) and what keeps the index in step with
 * the connections: every indexable table of a new connection is synced at once, a changed connection is synced
 * again, a removed one leaves the index, and each connection is synced on its own schedule.
 *
 * Owner-scoped like every database operation: another user's connection is the same 404 as an unknown one.
 */
import type { components } from '../../../generated/openapi.js';
import type { TableSchema } from '../../connectors/index.js';
import { AppError, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import type { IndexJobTrigger } from '../../models/index-job.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord, IndexJobRepository } from '../../repositories/index-job-repository.js';
import type { IndexTableChanges, IndexTableRecord, IndexTableRepository } from '../../repositories/index-table-repository.js';
import type { UserCaller } from '../callers.js';
import { contentTables, indexableProblem, tableId } from '../../search-index/documents.js';
import { columnsReady, eligibleColumns } from '../../search-index/filter-columns.js';
import { spaceName, type IndexStore } from '../../search-index/index-store.js';
import { indexedAsOf, lagSeconds } from '../../search-index/changes/freshness.js';
import { binlogPositionView } from '../../search-index/changes/binlog-events.js';
import { DEFAULT_POLL_INTERVAL_SECONDS } from '../../search-index/changes/poller.js';
import { isIndexStorageFailure } from '../../search-index/storage-failures.js';

type IndexJob = components['schemas']['IndexJob'];
type IndexedTable = components['schemas']['IndexedTable'];
type DatabaseIndex = components['schemas']['DatabaseIndexResponse']['data'];
type SemanticIndexJob = components['schemas']['SemanticIndexJob'];

/** Tables of one connection the index holds at most (as many as one search reads live). */
export const MAX_INDEXED_TABLES = 50;

export interface IndexServiceDeps {
  owned(userId: string, databaseId: string): Promise<DatabaseConnectionRecord>;
  /** The connection's tables: the cached discovery, or `fresh` to discover again (new and dropped tables). */
  tablesOf(record: DatabaseConnectionRecord, fresh?: boolean): Promise<TableSchema[]>;
  /** Rows per table the owner's plan indexes. */
  rowLimit(userId: string): Promise<number>;
  connections: Pick<DatabaseConnectionRepository, 'dueForSync' | 'claimScheduledSync' | 'findById'>;
  tables: IndexTableRepository;
  jobs: IndexJobRepository;
  store: Pick<IndexStore, 'space' | 'spaceSize'>;
  runner: { pump(): Promise<void>; abort(jobId: string): void; abortConnection(connectionId: string): Promise<void> };
  /** The embedding model semantic tables are indexed with. */
  providerId: string;
  /** A table's rows left the index (or it was re-synced): cached answers that read it are stale. */
  onIndexChanged(connectionId: string): void;
  onError(error: unknown): void;
  /**
   * Stream mode's side on the source: the WAL bytes the connection's slot keeps (null: no slot), and ending the
   * connection's stream with its slot and publication dropped (best effort: what failed, in words to show).
   */
  streams?: { lagBytes(record: DatabaseConnectionRecord): Promise<number | null>; drop(record: DatabaseConnectionRecord): Promise<string[]> };
  now?: () => number;
}

/** A table of the schema by the name a caller gave: exact first, then case-insensitive (`schema.table` allowed). */
export function findTable(tables: TableSchema[], name: string): TableSchema | null {
  const lower = name.toLowerCase();
  return tables.find((t) => tableId(t) === name) ?? tables.find((t) => tableId(t).toLowerCase() === lower) ?? null;
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
      this.deps.tablesOf(record),
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

  /** The slot's retained WAL bytes when a table of the connection streams (null when none does, or unknown). */
  private async streamLagBytes(record: DatabaseConnectionRecord, indexed: IndexTableRecord[]): Promise<number | null> {
    if (!this.deps.streams || !indexed.some((t) => t.changeStream)) return null;
    return this.deps.streams.lagBytes(record).catch(() => null);
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
    const schema = await this.deps.tablesOf(record, true);
    const named = (names ?? []).map((name, i) => {
      const table = findTable(schema, name);
      if (!table) throw this.noSuchTable(name);
      const problem = indexableProblem(table);
      if (problem) throw validationError([{ location: 'body', path: `/tables/${i}`, message: `names a table that ${problem}` }]);
      return table;
    });
    const indexable = await this.keepIndexable(record, schema, named);
    const jobs = await this.enqueue(record, named.length > 0 ? named : indexable, 'manual');
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
      if (rewrite && record.indexEnabled) await this.enqueue(record, [table], 'settings');
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

  /** A poll found the table's columns changed: every row is read again by a full sync (queued unless one is live). */
  async reconcile(record: DatabaseConnectionRecord, tableName: string): Promise<void> {
    const table = findTable(await this.deps.tablesOf(record), tableName);
    if (table && record.indexEnabled) await this.enqueue(record, [table], 'reconcile');
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
    const [job] = await this.enqueue(record, [table], 'settings');
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
    const view = this.jobView(job);
    const entry = await this.deps.tables.find(job.connectionId, job.tableName);
    return {
      jobId: view.jobId,
      databaseId: view.databaseId,
      table: view.table,
      status: view.status,
      providerId: view.providerId ?? this.deps.providerId,
      rowsDone: view.rowsDone,
      rowsTotal: view.rowsTotal,
      rowLimit: view.rowLimit,
      truncated: view.truncated,
      rowsEmbedded: view.rowsEmbedded,
      rowsSkipped: view.rowsSkipped,
      rowsDeleted: view.rowsDeleted,
      ratePerSecond: view.ratePerSecond,
      etaSeconds: view.etaSeconds,
      searchable: Boolean(entry?.semantic && entry.syncedAt && entry.vectorModel === this.deps.providerId),
      error: view.error,
      createdAt: view.createdAt,
      startedAt: view.startedAt,
      finishedAt: view.finishedAt,
    };
  }

  /** A new connection: every indexable table is registered and synced at once (when indexing is on). */
  async connected(record: DatabaseConnectionRecord): Promise<void> {
    if (!record.indexEnabled) return;
    await this.enqueue(record, this.indexable(await this.deps.tablesOf(record)), 'connect');
  }

  /**
   * A changed connection. Another environment or database means another space or other rows: the old rows leave
   * the index and every table is synced again; indexing turned off removes the rows; turned on syncs them.
   */
  async changed(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): Promise<void> {
    const moved = before.environment !== after.environment || reconnected;
    if (!after.indexEnabled || moved) await this.removeRows(before);
    if (after.indexEnabled && (moved || !before.indexEnabled)) {
      await this.enqueue(after, this.indexable(await this.deps.tablesOf(after, true)), 'settings');
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
    await this.enqueue(record, await this.keepIndexable(record, await this.deps.tablesOf(record, true)), 'upload');
  }

  /** A connection is being removed: its jobs stop and its rows leave the index (its records cascade in the store). */
  async removing(record: DatabaseConnectionRecord): Promise<void> {
    const streamed = (await this.deps.tables.listByConnections([record.id])).some((t) => t.changeStream);
    if (streamed && this.deps.streams) {
      const problems = await this.deps.streams.drop(record);
      if (problems.length > 0) this.deps.onError(new Error(problems.join(' ')));
    }
    await this.removeRows(record);
  }

  /**
   * Queues the syncs that are due: each connection with a schedule whose next sync time has passed, claimed by one
   * process (the one whose update moves the time on). New tables of the schema join the index, dropped ones leave.
   */
  async runSchedule(batch = 20): Promise<number> {
    const now = new Date(this.now());
    let queued = 0;
    for (const record of await this.deps.connections.dueForSync(now, batch)) {
      const next = new Date(now.getTime() + record.syncIntervalMinutes! * 60_000);
      if (!(await this.deps.connections.claimScheduledSync(record.id, record.nextSyncAt, next))) continue;
      try {
        const schema = await this.keepIndexable(record, await this.deps.tablesOf(record, true));
        queued += (await this.enqueue(record, schema, 'schedule')).length;
      } catch (error) {
        this.deps.onError(error); // an unreachable database waits for its next turn
      }
    }
    return queued;
  }

  /** The indexed tables of these connections (with what search needs to know about them). */
  async indexedTables(connectionIds: string[]): Promise<{ tables: IndexTableRecord[]; liveJobs: IndexJobRecord[] }> {
    const [tables, liveJobs] = await Promise.all([this.deps.tables.listByConnections(connectionIds), this.deps.jobs.liveByConnections(connectionIds)]);
    return { tables, liveJobs };
  }

  /**
   * The one rule of every sync that reads the schema afresh (asked for, scheduled, or after an upload): tables the
   * schema no longer has, or that can no longer be indexed, leave the index (a table named in the request stays);
   * the indexable ones are returned.
   */
  private async keepIndexable(record: DatabaseConnectionRecord, schema: TableSchema[], named: TableSchema[] = []): Promise<TableSchema[]> {
    const indexable = this.indexable(schema);
    await this.dropTablesNotIn(record, [...indexable, ...named].map(tableId));
    return indexable;
  }

    private indexable(schema: TableSchema[]): TableSchema[] {
    return contentTables(schema).filter((table) => indexableProblem(table) === null).slice(0, MAX_INDEXED_TABLES);
  }

  /** Registers the tables in the index and queues a sync of each (a live job is returned as it is). */
  private async enqueue(record: DatabaseConnectionRecord, tables: TableSchema[], trigger: IndexJobTrigger): Promise<IndexJobRecord[]> {
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

  private async removeRows(record: DatabaseConnectionRecord): Promise<void> {
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
    this.deps.onIndexChanged(record.id);
  }

  private async schemaTable(record: DatabaseConnectionRecord, name: string): Promise<TableSchema> {
    const table = findTable(await this.deps.tablesOf(record), name);
    if (!table) throw this.noSuchTable(name);
    return table;
  }

  private noSuchTable(name: string): AppError {
    return new AppError('NOT_FOUND', `No table "${name}" in this database's schema (refresh the schema if it is new).`, { resource: 'table', id: name });
  }

  private tableView(record: DatabaseConnectionRecord, table: TableSchema, indexed: IndexTableRecord[], jobs: IndexJobRecord[], rowLimit: number, streamLagBytes: number | null = null): IndexedTable {
    const name = tableId(table);
    const entry = indexed.find((t) => t.tableName === name) ?? null;
    const job = jobs.find((j) => j.tableName === name) ?? null;
    const problem = indexableProblem(table);
    const reason = problem ? `The table ${problem}.`
      : !record.indexEnabled ? 'Indexing is off for this connection; the table is searched live.'
        : null;
    const state: IndexedTable['state'] = reason !== null || !entry ? 'not_indexed'
      : entry.syncedAt ? 'ready'
        : job?.status === 'failed' ? 'failed' : 'pending';
    return {
      table: name,
      state,
      reason,
      semantic: entry?.semantic ?? false,
      filterableColumns: entry?.filterableColumns ?? [],
      sortableColumns: entry?.sortableColumns ?? [],
      eligibleColumns: problem ? [] : eligibleColumns(table),
      semanticReady: Boolean(entry?.semantic && entry.syncedAt && entry.vectorModel === this.deps.providerId),
      columnsReady: Boolean(entry?.syncedAt && columnsReady(entry)),
      rows: entry?.rows ?? 0,
      rowLimit,
      truncated: entry?.truncated ?? false,
      syncedAt: entry?.syncedAt?.toISOString() ?? null,
      sourceAsOf: entry?.syncStartedAt?.toISOString() ?? null,
      changeColumn: entry?.changeColumn ?? null,
      pollIntervalSeconds: entry?.changeColumn ? (entry.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS) : null,
      mode: entry?.changeStream ? 'stream' : entry?.changeColumn ? 'poll' : 'snapshot',
      lagSeconds: state === 'ready' && entry ? lagSeconds(indexedAsOf(entry), this.now()) : null,
      lagBytes: entry?.changeStream ? streamLagBytes : null,
      binlogPosition: entry?.changeStream && record.engine === 'mysql' ? binlogPositionView(entry.changeCursor) : null,
      lastError: entry?.changeError ?? null,
      ...(job ? { job: this.jobView(job) } : {}),
    };
  }

  /** The wire shape, with rate (rows per second of the current run) and ETA derived from the stored progress. */
  jobView(job: IndexJobRecord): IndexJob {
    const now = this.now();
    let ratePerSecond: number | null = null;
    let etaSeconds: number | null = null;
    if (job.status === 'running' && job.resumedAt) {
      const seconds = ((job.heartbeatAt?.getTime() ?? now) - job.resumedAt.getTime()) / 1000;
      const rows = job.rowsDone - job.rowsAtResume;
      if (seconds > 0 && rows > 0) ratePerSecond = rows / seconds;
      if (ratePerSecond && job.rowsTotal !== null) etaSeconds = Math.ceil(Math.max(0, job.rowsTotal - job.rowsDone) / ratePerSecond);
    } else if (job.status === 'done' && job.startedAt && job.finishedAt) {
      const seconds = (job.finishedAt.getTime() - job.startedAt.getTime()) / 1000;
      if (seconds > 0) ratePerSecond = job.rowsDone / seconds;
      etaSeconds = 0;
    }
    return {
      jobId: job.id,
      databaseId: job.connectionId,
      table: job.tableName,
      status: job.status,
      trigger: job.trigger,
      semantic: job.semantic,
      providerId: job.providerId,
      rowsDone: job.rowsDone,
      rowsTotal: job.rowsTotal,
      rowLimit: job.rowLimit,
      truncated: job.truncated,
      rowsWritten: job.rowsWritten,
      rowsEmbedded: job.rowsEmbedded,
      rowsSkipped: job.rowsSkipped,
      rowsDeleted: job.rowsDeleted,
      rowsOversize: job.rowsOversize,
      attempts: job.attempts,
      ratePerSecond: ratePerSecond === null ? null : Math.round(ratePerSecond * 10) / 10,
      etaSeconds,
      error: job.error ?? null,
      createdAt: job.createdAt.toISOString(),
      startedAt: job.startedAt?.toISOString() ?? null,
      finishedAt: job.finishedAt?.toISOString() ?? null,
    };
  }
}
