/**
 * Index jobs against a real store and a real SQLite source: incremental indexing (content hash, deleted rows, model
 * change, row limit), cancel, and resume after a graceful stop and after a crash.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PooledExecutor } from '../../../src/connectors/index.js';
import { semanticIndexJobRepository as jobs, type SemanticIndexJobRecord } from '../../../src/repositories/semantic-index-job-repository.js';
import { semanticVectorRepository as vectors } from '../../../src/repositories/semantic-vector-repository.js';
import { SemanticJobRunner, type JobRunnerDeps } from '../../../src/semantic/job-runner.js';
import { docsTable, FakeProvider, onSource, openStore, silentLogger, sourceTable, type TestStore } from './support.js';

/** Real store, real model or worker thread: allow for a loaded machine (the projects' default is 5 s). */
const SLOW = 30_000;

let store: TestStore;
let source: PooledExecutor;
let jobCount = 0;

beforeEach(async () => {
  store = await openStore();
  source = await sourceTable(store.dir, 20);
});
afterEach(async () => {
  await source?.close();
  await store?.close();
});

function runner(provider: FakeProvider, overrides: Partial<JobRunnerDeps> = {}): SemanticJobRunner {
  return new SemanticJobRunner({
    jobs,
    vectors,
    provider,
    findConnection: async (id) => (id === store.connection.id ? store.connection : null),
    executorFor: async () => source,
    tablesOf: async () => [docsTable],
    logger: silentLogger,
    onEnded: () => undefined,
    pageRows: 5,
    pollMs: 60_000,
    heartbeatMs: 60_000,
    ...overrides,
  });
}

async function queue(providerId: string, rowLimit = 1000): Promise<SemanticIndexJobRecord> {
  jobCount += 1;
  return (await jobs.createQueued({ id: `sidx_test${jobCount}`, connectionId: store.connection.id, tableName: 'docs', providerId, rowLimit }))!;
}

/** Queues a job, runs it to the end on a fresh runner, and returns the stored job. */
async function indexOnce(provider: FakeProvider, rowLimit?: number): Promise<SemanticIndexJobRecord> {
  const job = await queue(provider.id, rowLimit);
  const r = runner(provider);
  r.start();
  await r.pump();
  await r.idle();
  await r.stop();
  return (await jobs.findById(job.id))!;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('incremental indexing', () => {
  it('when a table is indexed, then every row gets a vector and the job is done with its counters', async () => {
    const provider = new FakeProvider();
    const job = await indexOnce(provider);
    expect(job).toMatchObject({ status: 'done', rowsDone: 20, rowsTotal: 20, rowsEmbedded: 20, rowsSkipped: 0, rowsDeleted: 0, truncated: false, error: null });
    expect(provider.embedded).toHaveLength(20);
    expect(await vectors.countFor(store.connection.id, 'docs', provider.id)).toBe(20);
  }, SLOW);

  it('when nothing changed, then a second run embeds nothing; a changed row is embedded again and a deleted row dropped', async () => {
    await indexOnce(new FakeProvider());
    const again = new FakeProvider();
    expect(await indexOnce(again)).toMatchObject({ status: 'done', rowsEmbedded: 0, rowsSkipped: 20 });
    expect(again.embedded).toEqual([]);

    await onSource(store.dir, ["UPDATE docs SET body = 'a new body' WHERE id = 7", 'DELETE FROM docs WHERE id IN (3, 12)']);
    const changed = new FakeProvider();
    expect(await indexOnce(changed)).toMatchObject({ status: 'done', rowsDone: 18, rowsEmbedded: 1, rowsSkipped: 17, rowsDeleted: 2 });
    expect(changed.embedded).toEqual(['title 7\na new body']);
    expect(await vectors.countFor(store.connection.id, 'docs', changed.id)).toBe(18);
  }, SLOW);

  it('when the model changes, then every row is embedded again with the new model', async () => {
    await indexOnce(new FakeProvider('fake:model-a'));
    const next = new FakeProvider('fake:model-b');
    expect(await indexOnce(next)).toMatchObject({ status: 'done', rowsEmbedded: 20, rowsSkipped: 0 });
    expect(await vectors.countFor(store.connection.id, 'docs', 'fake:model-b')).toBe(20);
    expect(await vectors.countFor(store.connection.id, 'docs', 'fake:model-a')).toBe(0);
  }, SLOW);

  it("when the table has more rows than the tier's limit, then the first rows by key are indexed and the job says truncated", async () => {
    const job = await indexOnce(new FakeProvider(), 12);
    expect(job).toMatchObject({ status: 'done', rowsDone: 12, rowsTotal: 12, truncated: true });
    expect(await vectors.countFor(store.connection.id, 'docs', 'fake:hash-8')).toBe(12);
  }, SLOW);

  it('when the table is gone from the schema, then the job fails with a stored reason', async () => {
    const job = await queue('fake:hash-8');
    const r = runner(new FakeProvider(), { tablesOf: async () => [] });
    await r.pump();
    await r.idle();
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'failed', error: { code: 'NOT_FOUND', message: expect.stringContaining('docs') } });
  }, SLOW);
});

describe('the job table', () => {
  it('when a table already has a live job, then the store refuses a second one; once it ended, a new one is accepted', async () => {
    const first = await queue('fake:hash-8');
    expect(await jobs.createQueued({ id: 'sidx_dup', connectionId: store.connection.id, tableName: 'docs', providerId: 'fake:hash-8', rowLimit: 10 })).toBeNull();
    await jobs.cancel(first.id, new Date());
    expect(await jobs.createQueued({ id: 'sidx_next', connectionId: store.connection.id, tableName: 'docs', providerId: 'fake:hash-8', rowLimit: 10 })).toMatchObject({ status: 'queued', rowsTotal: null });
  }, SLOW);
});

describe('cancel', () => {
  it('when a running job is cancelled, then it stops after its page, stays cancelled, and a new job skips the rows already stored', async () => {
    const provider = new FakeProvider();
    const job = await queue(provider.id);
    provider.hold();
    const r = runner(provider);
    await r.pump();
    await provider.waiting; // the first page is being embedded
    expect(await jobs.cancel(job.id, new Date())).toBe(true);
    r.abort(job.id);
    provider.release();
    await r.idle();
    const cancelled = await jobs.findById(job.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', rowsDone: 0 });
    expect(cancelled!.finishedAt).toBeInstanceOf(Date);
    expect(await jobs.cancel(job.id, new Date())).toBe(false);

    const next = await indexOnce(new FakeProvider());
    expect(next).toMatchObject({ status: 'done', rowsEmbedded: 15, rowsSkipped: 5 });
  }, SLOW);
});

describe('resume', () => {
  it('when the server stops mid-job, then the job is queued again and the next runner finishes it from its cursor', async () => {
    const first = new FakeProvider();
    const job = await queue(first.id);
    const r1 = runner(first);
    await r1.pump();
    await until(async () => ((await jobs.findById(job.id))?.rowsDone ?? 0) >= 5);
    first.hold();
    await first.waiting; // page 2 or 3 is being embedded
    const stopping = r1.stop();
    first.release();
    await stopping;
    const stopped = (await jobs.findById(job.id))!;
    expect(stopped.status).toBe('queued');
    expect(stopped.heartbeatAt).toBeNull();
    expect(stopped.rowsDone).toBe(first.embedded.length);
    expect(JSON.parse(stopped.cursor!)).toEqual([stopped.rowsDone]);

    const second = new FakeProvider();
    const r2 = runner(second);
    r2.start();
    await r2.pump();
    await r2.idle();
    await r2.stop();
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', rowsDone: 20, rowsEmbedded: 20, rowsSkipped: 0 });
    expect(second.embedded).toHaveLength(20 - stopped.rowsDone);
    expect([...first.embedded, ...second.embedded]).toEqual(Array.from({ length: 20 }, (_, i) => `title ${i + 1}\nbody of row ${i + 1}`));
  }, SLOW);

  it('when a process dies mid-job, then another claims the job only once its heartbeat is stale, and finishes it', async () => {
    let now = Date.parse('2026-11-22T10:00:00Z');
    const clock = () => now;
    const first = new FakeProvider();
    const job = await queue(first.id);
    const dying = runner(first, { now: clock });
    await dying.pump();
    await until(async () => ((await jobs.findById(job.id))?.rowsDone ?? 0) >= 5);
    first.hold();
    await first.waiting;
    dying.abort(job.id); // the process "dies": no graceful release, the job stays running
    first.release();
    await dying.idle();
    const orphan = (await jobs.findById(job.id))!;
    expect(orphan.status).toBe('running');

    now += 30_000;
    const early = runner(new FakeProvider(), { now: clock, staleMs: 60_000 });
    await early.pump();
    await early.idle();
    expect((await jobs.findById(job.id))!.rowsDone).toBe(orphan.rowsDone);

    now += 40_000;
    const heir = new FakeProvider();
    const late = runner(heir, { now: clock, staleMs: 60_000 });
    await late.pump();
    await late.idle();
    expect(await jobs.findById(job.id)).toMatchObject({ status: 'done', rowsDone: 20, rowsEmbedded: 20 });
    expect(heir.embedded).toHaveLength(20 - orphan.rowsDone);
  }, SLOW);
});
