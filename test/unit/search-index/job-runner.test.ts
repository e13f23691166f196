/**
 * The index job runner against Quarry's real store (the queue) and a real SQLite source: a finished sync makes the
 * table searchable, one job per search space runs even with two runners on one store, a job whose process died is
 * claimed again once its heartbeat is stale, and a graceful stop hands running jobs back as queued.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PooledExecutor } from '../../../src/connectors/index.js';
import { EmbeddingError } from '../../../src/embeddings/index.js';
import { IndexJobModel } from '../../../src/models/index.js';
import { databaseConnectionRepository } from '../../../src/repositories/database-connection-repository.js';
import { indexJobRepository as jobs, type IndexJobRecord } from '../../../src/repositories/index-job-repository.js';
import { indexTableRepository as tables, type IndexTableRecord } from '../../../src/repositories/index-table-repository.js';
import { IndexStore, spaceName } from '../../../src/search-index/index-store.js';
import { IndexJobRunner, type JobRunnerDeps } from '../../../src/search-index/job-runner.js';
import { addConnection, addUser, docsTable, FakeProvider, openStore, queueJob, rowText, silentLogger, SLOW, sourceTable, until, type TestStore } from './support.js';

let store: TestStore;
let source: PooledExecutor;
let synced: string[];

beforeEach(async () => {
  store = await openStore();
  source = await sourceTable(store.dir, 20);
  synced = [];
});
afterEach(async () => {
  await source?.close();
  await store?.close();
});

function runner(provider: FakeProvider, overrides: Partial<JobRunnerDeps> = {}): IndexJobRunner {
  return new IndexJobRunner({
    jobs,
    tables,
    store: store.index,
    provider,
    findConnection: (id) => databaseConnectionRepository.findById(id),
    executorFor: async () => source,
    catalog: { tables: async () => [docsTable] },
    logger: silentLogger,
    onSynced: (connectionId, tableName) => synced.push(`${connectionId}:${tableName}`),
    sync: { pageRows: 5, embedPageRows: 5, writeRows: 5 },
    pollMs: 600_000,
    heartbeatMs: 600_000,
    ...overrides,
  });
}

/** The connection's `docs` table in the index's records (semantic or not), and a queued job of it. */
async function indexed(semantic: boolean, connectionId = store.connection.id, space = store.space): Promise<{ table: IndexTableRecord; job: IndexJobRecord }> {
  const table = await tables.ensure(connectionId, 'docs', () => `itb_${connectionId}`, { semantic });
  const job = await queueJob(store, { connectionId, space, semantic, providerId: semantic ? 'fake:hash-8' : null });
  return { table, job };
}

async function runOnce(provider: FakeProvider, overrides: Partial<JobRunnerDeps> = {}): Promise<void> {
  const r = runner(provider, overrides);
  await r.pump();
  await r.idle();
}

const statuses = async () => (await IndexJobModel.findAll({ order: [['id', 'ASC']] })).map((job) => `${job.id}:${job.status}`);
const running = async () => IndexJobModel.count({ where: { status: 'running' } });

describe('a finished sync', () => {
  it('when a semantic job runs to the end, then the table is searchable: its record holds rows, columns, model and sync times', async () => {
    const provider = new FakeProvider();
    const { table, job } = await indexed(true);
    await runOnce(provider);
    const done = (await jobs.findById(job.id))!;
    expect(done).toMatchObject({ status: 'done', semantic: true, rowsDone: 20, rowsEmbedded: 20, error: null });
    expect(await tables.find(store.connection.id, 'docs')).toMatchObject({
      id: table.id, rows: 20, truncated: false, keyColumns: ['id'], textColumns: ['title', 'body'], vectorModel: provider.id,
      syncStartedAt: done.startedAt, syncedAt: expect.any(Date),
    });
    expect(synced).toEqual([`${store.connection.id}:docs`]);
    const space = (await store.index.space(store.space))!;
    expect(await space.countRows(table.id)).toBe(20);
  }, SLOW);

  it('when a job is done, then its table was recorded as synced and its caches told before: whoever sees the job done finds the table searchable', async () => {
    const provider = new FakeProvider();
    const { table } = await indexed(true);
    let atFinish: IndexTableRecord | null = null;
    let toldAtFinish: string[] = [];
    await runOnce(provider, {
      jobs: { ...jobs, finish: async (id, status, changes) => {
        atFinish = await tables.find(store.connection.id, 'docs');
        toldAtFinish = [...synced];
        return jobs.finish(id, status, changes);
      } },
    });
    expect(atFinish).toMatchObject({ id: table.id, rows: 20, vectorModel: provider.id, syncedAt: expect.any(Date) });
    expect(toldAtFinish).toEqual([`${store.connection.id}:docs`]);
  }, SLOW);

  it('when a sync ends, then the versions it wrote are removed once they are older than the versions kept', async () => {
    // The store and the runner keep old versions for a second (INDEX_KEEP_VERSIONS_MS).
    const index = new IndexStore({ uri: join(store.dir, 'index'), readConsistencySeconds: 0, keepVersionsMs: 1000 });
    try {
      await indexed(false);
      const r = runner(new FakeProvider(), { store: index, keepVersionsMs: 1000 });
      await r.pump();
      await r.idle();
      const space = (await index.space(store.space))!;
      expect(await space.versions()).toBeGreaterThan(1);
      // Nothing else writes the space or cleans it up: only the runner's cleanup after the sync removes them.
      // Polled while the cleanup deletes versions: a listing may name a manifest deleted before it is read.
      await until(async () => (await space.versions().catch(() => null)) === 1, 'one version left');
      expect(await space.countRows('itb_db_1')).toBe(20);
      await r.stop();
    } finally {
      await index.close();
    }
  }, SLOW);

  it('when a table is synced again, then only its newest ended job is kept', async () => {
    const { job } = await indexed(false);
    await runOnce(new FakeProvider());
    const second = await queueJob(store);
    await runOnce(new FakeProvider());
    expect(await jobs.findById(job.id)).toBeNull();
    expect(await jobs.findById(second.id)).toMatchObject({ status: 'done', rowsSkipped: 20 });
  }, SLOW);

  it("when the job's semantic flag differs from the table's setting, then the table's setting when it runs wins", async () => {
    await tables.ensure(store.connection.id, 'docs', () => 'itb_docs', { semantic: false });
    const job = await queueJob(store, { semantic: true, providerId: 'fake:hash-8' });
    const provider = new FakeProvider();
    await runOnce(provider);
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', semantic: false, providerId: null, rowsEmbedded: 0 });
    expect(provider.embedded).toEqual([]);
    expect((await tables.find(store.connection.id, 'docs'))!.vectorModel).toBeNull();
  }, SLOW);

  it('when semantic search is turned on while a text sync runs, then a sync that embeds the rows follows it', async () => {
    const { table, job } = await indexed(false);
    const provider = new FakeProvider();
    await runOnce(provider, {
      // The owner turns semantic on once the text job has started.
      catalog: {
        tables: async () => {
          await tables.update(table.id, { semantic: true });
          return [docsTable];
        },
      },
    });
    // The text job ran without embeddings: the follow-up rewrote every row with its vector (and replaced it in the history).
    const follow = (await jobs.latest(store.connection.id, 'docs'))!;
    expect(follow.id).not.toBe(job.id);
    expect(follow).toMatchObject({ status: 'done', semantic: true, providerId: provider.id, trigger: 'settings', rowsWritten: 20, rowsEmbedded: 20 });
    expect(await jobs.findById(job.id)).toBeNull();
    expect(provider.embedded).toHaveLength(20);
    expect((await tables.find(store.connection.id, 'docs'))!.vectorModel).toBe(provider.id);
  }, SLOW);
  it('when filter columns change after the job checked for changes but before it ends, then a sync that writes them still follows', async () => {
    const { table, job } = await indexed(false);
    const provider = new FakeProvider();
    // The owner's request lands in the gap: the job already looked for changed settings, and the request finds the
    // job still running, so it queues none of its own.
    const racing = {
      ...jobs,
      finish: async (...args: Parameters<typeof jobs.finish>) => {
        if (args[0] === job.id) {
          await tables.update(table.id, { filterableColumns: ['title'] });
          expect(await jobs.findLive(store.connection.id, 'docs')).toMatchObject({ id: job.id, status: 'running' });
        }
        return jobs.finish(...args);
      },
    };
    await runOnce(provider, { jobs: racing });
    const follow = (await jobs.latest(store.connection.id, 'docs'))!;
    expect(follow.id).not.toBe(job.id);
    expect(follow).toMatchObject({ status: 'done', trigger: 'settings' });
    expect((await tables.find(store.connection.id, 'docs'))!.syncedColumns).toEqual({ filterable: ['title'], sortable: [] });
  }, SLOW);
});

describe('a sync that cannot finish', () => {
  it('when the table is gone from the schema, then the job fails with a stored reason', async () => {
    const { job } = await indexed(false);
    await runOnce(new FakeProvider(), { catalog: { tables: async () => [] } });
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'failed', error: { code: 'NOT_FOUND', message: expect.stringContaining('docs') } });
    expect(synced).toEqual([]);
  }, SLOW);

  it('when the embedding model fails, then the job fails with EMBEDDING_FAILED and its words', async () => {
    const provider = new FakeProvider();
    provider.embed = () => Promise.reject(new EmbeddingError('The embedding service answered 503.'));
    const { job } = await indexed(true);
    await runOnce(provider);
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'failed', error: { code: 'EMBEDDING_FAILED', message: 'The embedding service answered 503.' } });
  }, SLOW);

  it('when something unexpected breaks, then the job fails with a safe message, never the internal one', async () => {
    const { job } = await indexed(false);
    await runOnce(new FakeProvider(), { executorFor: () => Promise.reject(new Error('secret internals at /srv/x')) });
    const failed = (await jobs.findById(job.id))!;
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
    expect(JSON.stringify(failed.error)).not.toContain('secret');
  }, SLOW);

  it('when the table left the index before its job ran, then the job ends cancelled and its space is free for the next', async () => {
    const job = await queueJob(store); // no index record for the table
    const { job: other } = await indexed(false, (await addConnection('db_2', 'usr_1')).id);
    await runOnce(new FakeProvider());
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'cancelled', heartbeatAt: null });
    expect(await jobs.findById(other.id)).toMatchObject({ status: 'done' });
  }, SLOW);

  it('when a running job is cancelled, then it stops after its page and stays cancelled; the next sync skips the rows written', async () => {
    const provider = new FakeProvider();
    const { job } = await indexed(true);
    const r = runner(provider);
    await r.pump();
    await until(async () => ((await jobs.findById(job.id))?.rowsDone ?? 0) >= 5, 'first page');
    provider.hold();
    await provider.waiting;
    expect(await jobs.cancel(job.id, new Date())).toBe(true);
    r.abort(job.id);
    provider.release();
    await r.idle();
    const cancelled = (await jobs.findById(job.id))!;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.rowsDone).toBeLessThan(20);
    expect(await jobs.cancel(job.id, new Date())).toBe(false);

    // Rows embedded for a page read ahead while the last write ran may not be written: the rows in the index count.
    const written = await (await store.index.ensureSpace(store.space)).countRows(`itb_${store.connection.id}`);
    expect(written).toBeGreaterThanOrEqual(5);
    const next = await queueJob(store, { semantic: true, providerId: provider.id });
    await runOnce(new FakeProvider());
    expect(await jobs.findById(next.id)).toMatchObject({ status: 'done', rowsEmbedded: 20 - written, rowsSkipped: written });
  }, SLOW);
});

describe('one writer per search space', () => {
  it('when two runners share one store and two jobs share a space, then only one runs at a time and both finish', async () => {
    const second = await addConnection('db_2', 'usr_1');
    const { job: a } = await indexed(true);
    const { job: b } = await indexed(true, second.id);
    const p1 = new FakeProvider();
    const p2 = new FakeProvider();
    p1.hold();
    p2.hold();
    const r1 = runner(p1, { maxActive: 2 });
    const r2 = runner(p2, { maxActive: 2 });
    await Promise.all([r1.pump(), r2.pump(), r1.pump(), r2.pump()]);
    await Promise.race([p1.waiting, p2.waiting]);
    expect(await running()).toBe(1);
    await Promise.all([r1.pump(), r2.pump()]);
    expect(await running()).toBe(1);
    p1.release();
    p2.release();
    await Promise.all([r1.idle(), r2.idle()]);
    expect(await statuses()).toEqual([`${a.id}:done`, `${b.id}:done`]);
    expect([...p1.embedded, ...p2.embedded]).toHaveLength(20); // the second table reused the first one's vectors
  }, SLOW);

  it('when jobs are in different spaces, then one runner runs them side by side', async () => {
    await addUser('usr_2');
    const foreign = await addConnection('db_3', 'usr_2');
    await indexed(true);
    await indexed(true, foreign.id, spaceName('usr_2', 'test'));
    const provider = new FakeProvider();
    provider.hold();
    const r = runner(provider, { maxActive: 2 });
    await r.pump();
    await provider.waiting;
    await until(async () => (await running()) === 2, 'both running');
    provider.release();
    await r.idle();
    expect(await IndexJobModel.count({ where: { status: 'done' } })).toBe(2);
  }, SLOW);
});

describe('resume', () => {
  it('when a process dies mid-job, then another claims the job only once its heartbeat is stale, and finishes it from its cursor', async () => {
    let now = Date.parse('2026-11-25T10:00:00Z');
    const clock = () => now;
    const first = new FakeProvider();
    const { job } = await indexed(true);
    const dying = runner(first, { now: clock });
    await dying.pump();
    await until(async () => ((await jobs.findById(job.id))?.rowsDone ?? 0) >= 5, 'first page');
    first.hold();
    await first.waiting;
    dying.abort(job.id); // the process "dies": no graceful release, the job stays running
    first.release();
    await dying.idle();
    const orphan = (await jobs.findById(job.id))!;
    expect(orphan.status).toBe('running');
    expect(orphan.rowsDone).toBe(first.embedded.length);

    now += 30_000;
    const early = new FakeProvider();
    await runOnce(early, { now: clock, staleMs: 60_000 });
    expect(early.embedded).toEqual([]);
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'running', rowsDone: orphan.rowsDone });

    now += 40_000;
    const heir = new FakeProvider();
    await runOnce(heir, { now: clock, staleMs: 60_000 });
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', rowsDone: 20, rowsEmbedded: 20 });
    expect([...first.embedded, ...heir.embedded]).toEqual(Array.from({ length: 20 }, (_, i) => rowText(i + 1)));
  }, SLOW);

  it('when a stale job holds a space and another job of the space is queued, then the space is freed and both finish', async () => {
    let now = Date.parse('2026-11-25T10:00:00Z');
    const clock = () => now;
    const { job: stale } = await indexed(false);
    await jobs.claimNext(new Date(now), new Date(now - 60_000), []); // claimed by a process that then died
    const { job: queued } = await indexed(false, (await addConnection('db_2', 'usr_1')).id);
    now += 120_000;
    await runOnce(new FakeProvider(), { now: clock, staleMs: 60_000 });
    expect(await statuses()).toEqual([`${stale.id}:done`, `${queued.id}:done`]);
  }, SLOW);

  it('when every process that claims a job dies, then after maxAttempts claims it ends failed with why, and is never resumed again', async () => {
    let now = Date.parse('2026-11-25T10:00:00Z');
    const { job } = await indexed(false);
    // Three processes claim the job and die before they finish (no graceful release): the job stays running.
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await jobs.claimNext(new Date(now), new Date(now - 60_000), [], 3))?.id).toBe(job.id);
      expect((await jobs.findById(job.id))!).toMatchObject({ status: 'running', attempts: attempt });
      now += 120_000;
    }
    const r = runner(new FakeProvider(), { now: () => now, staleMs: 60_000, maxAttempts: 3 });
    await r.pump();
    await r.idle();
    const ended = (await jobs.findById(job.id))!;
    expect(ended).toMatchObject({ status: 'failed', attempts: 3, heartbeatAt: null, error: { code: 'SYNC_ATTEMPTS_EXHAUSTED' } });
    expect(ended.error!.message).toMatch(/started 3 times and never finished/);
    now += 120_000;
    expect(await jobs.claimNext(new Date(now), new Date(now - 60_000), [], 3)).toBeNull();
    expect(synced).toEqual([]);
  }, SLOW);

  it('when a job is handed back by graceful stops, then those claims do not count as attempts', async () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    const { job } = await indexed(false);
    for (let stop = 0; stop < 5; stop++) {
      expect((await jobs.claimNext(new Date(now), new Date(now - 60_000), [], 3))?.id).toBe(job.id);
      await jobs.release([job.id]);
    }
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'queued', attempts: 0 });
    await runOnce(new FakeProvider(), { maxAttempts: 3 });
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', attempts: 1, rowsDone: 20 });
  }, SLOW);

  it('when the server stops gracefully mid-job, then the job is queued again and the next runner resumes it from its cursor', async () => {
    const first = new FakeProvider();
    const { job } = await indexed(true);
    const r1 = runner(first);
    r1.start();
    await r1.pump();
    await until(async () => ((await jobs.findById(job.id))?.rowsDone ?? 0) >= 5, 'first page');
    first.hold();
    await first.waiting;
    const stopping = r1.stop();
    first.release();
    await stopping;
    const stopped = (await jobs.findById(job.id))!;
    expect(stopped).toMatchObject({ status: 'queued', heartbeatAt: null, rowsDone: first.embedded.length });
    expect(JSON.parse(stopped.cursor!)).toEqual([stopped.rowsDone]);
    // A stopped runner claims nothing more.
    await r1.pump();
    expect((await jobs.findById(job.id))!.status).toBe('queued');

    const second = new FakeProvider();
    const r2 = runner(second);
    r2.start();
    await r2.pump();
    await r2.idle();
    await r2.stop();
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', rowsDone: 20, rowsEmbedded: 20, rowsSkipped: 0 });
    expect([...first.embedded, ...second.embedded]).toEqual(Array.from({ length: 20 }, (_, i) => rowText(i + 1)));
  }, SLOW);
});
