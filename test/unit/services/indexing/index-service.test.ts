/**
 * The index's schedule and a sync job's progress as the Indexing tag shows it, against Quarry's real store: each connection's scheduled sync is
 * queued by one process only, tables dropped from the schema leave the index, an unreachable database waits for its
 * next turn, and a job's rate and ETA come from its stored progress.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TableSchema } from '../../../../src/connectors/index.js';
import { IndexJobModel } from '../../../../src/models/index.js';
import { databaseConnectionRepository as connections, type DatabaseConnectionRecord } from '../../../../src/repositories/database-connection-repository.js';
import { indexJobRepository as jobs, type IndexJobRecord } from '../../../../src/repositories/index-job-repository.js';
import { indexTableRepository as tables } from '../../../../src/repositories/index-table-repository.js';
import { DomainEvents } from '../../../../src/lib/domain-events.js';
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import { rowId } from '../../../../src/search-index/documents.js';
import { IndexSchedule } from '../../../../src/search-index/schedule.js';
import { NO_PUMP, SyncQueue } from '../../../../src/search-index/sync-queue.js';
import { jobView } from '../../../../src/services/indexing/index-views.js';
import { addConnection, docsTable, openStore, SLOW, type TestStore } from '../../search-index/support.js';

const notesTable: TableSchema = { ...docsTable, name: 'notes' };
const T0 = Date.parse('2026-11-25T10:00:00Z');

let store: TestStore;
let now: number;
let schema: Map<string, () => Promise<TableSchema[]>>;
let errors: unknown[];
let changed: string[];
let events: DomainEvents;

beforeEach(async () => {
  store = await openStore();
  now = T0;
  schema = new Map();
  errors = [];
  changed = [];
  events = new DomainEvents(new MemoryBus());
  events.subscribe('index.synced', ({ databaseId }) => changed.push(databaseId));
});
afterEach(async () => {
  await store?.close();
});

/** One process's schedule, and the job views the Indexing tag answers with. */
function service() {
  const catalog = { tables: async (record: DatabaseConnectionRecord) => (schema.get(record.id) ?? (async () => [docsTable, notesTable]))() };
  const queue = new SyncQueue({ tables, jobs, store: store.index, runner: NO_PUMP, rowLimit: async () => 10_000, catalog, providerId: 'fake:hash-8', events, now: () => now });
  const schedule = new IndexSchedule({
    runner: { start: () => undefined, stop: async () => undefined }, store: store.index, jobs, syncing: false, cleanupEveryMs: 60_000,
    logger: { warn: () => undefined, info: () => undefined }, connections, catalog, queue, onError: (error) => errors.push(error), now: () => now,
  });
  return { runSchedule: () => schedule.runSchedule(), jobView: (job: IndexJobRecord) => jobView(job, now) };
}

async function scheduled(id: string, minutes = 30): Promise<DatabaseConnectionRecord> {
  return (await connections.update(id, { syncIntervalMinutes: minutes, nextSyncAt: null }))!;
}

const liveJobs = async () => (await IndexJobModel.findAll({ where: { status: ['queued', 'running'] }, order: [['tableName', 'ASC']] }))
  .map((job) => `${job.connectionId}:${job.tableName}:${job.trigger}`);

describe('runSchedule', () => {
  it('when a connection is due, then one process queues a sync of each indexable table and moves the next sync on; another process queues nothing', async () => {
    await scheduled(store.connection.id);
    expect(await service().runSchedule()).toBe(2);
    expect(await liveJobs()).toEqual(['db_1:docs:schedule', 'db_1:notes:schedule']);
    expect((await connections.findById(store.connection.id))!.nextSyncAt).toEqual(new Date(T0 + 30 * 60_000));
    expect(await service().runSchedule()).toBe(0);

    now += 29 * 60_000;
    expect(await service().runSchedule()).toBe(0);
  }, SLOW);

  it('when two processes run the schedule at once, then each due connection is queued once', async () => {
    await scheduled(store.connection.id);
    const [a, b] = await Promise.all([service().runSchedule(), service().runSchedule()]);
    expect(a + b).toBe(2);
    expect(await IndexJobModel.count()).toBe(2);
  }, SLOW);

  it('when indexing is off or there is no schedule, then the connection is never due', async () => {
    await connections.update(store.connection.id, { syncIntervalMinutes: null, nextSyncAt: null });
    const off = await addConnection('db_2', 'usr_1');
    await connections.update(off.id, { indexEnabled: false, syncIntervalMinutes: 30, nextSyncAt: null });
    expect(await service().runSchedule()).toBe(0);
    expect(await IndexJobModel.count()).toBe(0);
  }, SLOW);

  it('when a table was dropped from the schema, then the next scheduled sync takes it out of the index with its rows', async () => {
    await scheduled(store.connection.id);
    await service().runSchedule();
    const notes = (await tables.find(store.connection.id, 'notes'))!;
    const space = await store.index.ensureSpace(store.space);
    await space.upsert([{ rid: rowId(notes.id, '{"id":1}'), src: notes.id, pk: '{"id":1}', hash: 'h', thash: 't', text: 'a note', head: '', fields: '{}' }]);

    schema.set(store.connection.id, async () => [docsTable]);
    now += 31 * 60_000;
    expect(await service().runSchedule()).toBe(1);
    expect(await tables.find(store.connection.id, 'notes')).toBeNull();
    expect(await jobs.latest(store.connection.id, 'notes')).toMatchObject({ status: 'cancelled' });
    expect(await space.countRows(notes.id)).toBe(0);
    expect(changed).toEqual([store.connection.id]);
    expect(await liveJobs()).toEqual(['db_1:docs:schedule']);
  }, SLOW);

  it('when a database cannot be read, then it waits for its next turn and the other connections are still queued', async () => {
    await scheduled(store.connection.id);
    const other = await addConnection('db_2', 'usr_1');
    await scheduled(other.id, 60);
    schema.set(store.connection.id, () => Promise.reject(new Error('database unreachable')));
    expect(await service().runSchedule()).toBe(2);
    expect(errors).toHaveLength(1);
    expect(await liveJobs()).toEqual(['db_2:docs:schedule', 'db_2:notes:schedule']);
    expect((await connections.findById(store.connection.id))!.nextSyncAt).toEqual(new Date(T0 + 30 * 60_000));
  }, SLOW);
});

describe('jobView', () => {
  const job = (changes: Partial<IndexJobRecord>): IndexJobRecord => ({
    id: 'ijob_1', connectionId: 'db_1', tableName: 'docs', space: 'space_usr_1_test', trigger: 'manual', status: 'queued',
    semantic: false, providerId: null, rowLimit: 10_000, rowsTotal: null, rowsDone: 0, rowsWritten: 0, rowsEmbedded: 0,
    rowsSkipped: 0, rowsDeleted: 0, rowsOversize: 0, attempts: 0, truncated: false, cursor: null, error: null, heartbeatAt: null,
    resumedAt: null, rowsAtResume: 0, startedAt: null, finishedAt: null, createdAt: new Date(T0), updatedAt: new Date(T0), ...changes,
  });

  it('when a job runs, then its rate counts the rows of this run since it resumed, and its ETA the rows left at that rate', () => {
    const view = service().jobView(job({
      status: 'running', rowsTotal: 1100, rowsDone: 600, rowsAtResume: 100,
      startedAt: new Date(T0 - 60_000), resumedAt: new Date(T0), heartbeatAt: new Date(T0 + 10_000),
    }));
    expect(view).toMatchObject({ status: 'running', ratePerSecond: 50, etaSeconds: 10, startedAt: new Date(T0 - 60_000).toISOString(), finishedAt: null });
  });

  it('when a job is done, then its rate is over its whole run and nothing is left; a queued job has neither', () => {
    const done = service().jobView(job({ status: 'done', rowsDone: 400, rowsTotal: 400, startedAt: new Date(T0), finishedAt: new Date(T0 + 3000) }));
    expect(done).toMatchObject({ ratePerSecond: 133.3, etaSeconds: 0 });
    expect(service().jobView(job({}))).toMatchObject({ status: 'queued', ratePerSecond: null, etaSeconds: null, startedAt: null });
  });

  it('when a running job has written nothing yet, then it has no rate or ETA', () => {
    const view = service().jobView(job({ status: 'running', rowsTotal: 100, resumedAt: new Date(T0), heartbeatAt: new Date(T0 + 5000) }));
    expect(view).toMatchObject({ ratePerSecond: null, etaSeconds: null });
  });
});
