/**
 * The search index on an object store that goes down: a search falls back to each database's live
 * path and says so per table, a search only the index can answer is 503 with Retry-After, health reports the index's
 * storage down (degraded), and a sync asked for meanwhile waits and resumes once the store is back. The store is a
 * small S3-compatible server on loopback (test/support/s3-store.ts), stopped and started again by the test.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { startS3Store, type S3Store } from '../support/s3-store.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let s3: S3Store;
let t: TestServer;
let owner: TestUser;
let key: TestKey;
let db: string;

const as = () => ({ token: owner.token });
const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', body, { token: key.secret });
const ids = (res: { body: { data: { results: Array<{ primaryKey: { id: number } }> } } }) => res.body.data.results.map((r) => r.primaryKey.id).sort();
const onSource = (statements: string[]) => onSqlite(join(t.dataDir, 'sqlite', owner.id), 'shop.db', statements);

beforeAll(async () => {
  s3 = await startS3Store({ conditionalWrites: true });
  t = await startTestServer({
    INDEX_URI: 's3://quarry/index', INDEX_S3_ENDPOINT: s3.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
    INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'quarry-test-secret',
    // Every search is answered afresh: a cached page would hide where it came from.
    SEARCH_CACHE_TTL_MS: '0',
    // Nor are the index's rows kept in memory: a version read whole into memory answers a search without the store,
    // and this test is about the searches that need it (a version too large for INDEX_ROW_CACHE_MB, or not read yet).
    INDEX_ROW_CACHE_MB: '0',
  });
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onSource([
    'CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT NOT NULL, price REAL)',
    "INSERT INTO products VALUES (1, 'Stainless steel kettle', 39.5), (2, 'Cast iron pan', 25), (3, 'Tea kettle', 19)",
  ]);
  const created = await t.client.post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, as());
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  db = created.body.data.database.id;
  expect((await t.client.patch(`/api/v1/databases/${db}/index/tables/products`, { filterableColumns: ['price'] }, as())).status).toBe(200);
  await waitForIndex(t.client, owner.token, db);
}, 180_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await s3?.up().catch(() => undefined);
  await t?.stop();
  await s3?.close();
});

describe('the index on an object store that goes down', () => {
  it('when the store is down, then searches are answered live and say so, a filtered one is 503 with Retry-After, health is degraded, and a sync waits and resumes', async () => {
    const before = await search({ databases: [db], query: 'kettle' });
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body.data.databases[0]).toMatchObject({ source: 'index', status: 'ok' });
    expect(ids(before)).toEqual([1, 3]);

    await s3.down();
    try {
      const live = await search({ databases: [db], query: 'kettle' });
      expect(live.status, JSON.stringify(live.body)).toBe(200);
      expect(live.body.data.databases[0]).toMatchObject({ databaseId: db, source: 'live', status: 'ok', indexedAt: null });
      expect(live.body.data.liveTables).toEqual([{ databaseId: db, table: 'products', reason: 'index_unavailable' }]);
      expect(ids(live)).toEqual([1, 3]);

      const filtered = await search({ databases: [db], query: 'kettle', filter: { column: 'price', op: 'lt', value: 30 } });
      expect(filtered.status, JSON.stringify(filtered.body)).toBe(503);
      expect(filtered.body.error).toMatchObject({ code: 'INDEX_UNAVAILABLE', details: { retryAfter: 10 } });
      expect(filtered.headers.get('retry-after')).toBe('10');

      // The tables' states are still shown; only the size of the index is unknown.
      const overview = await t.client.get(`/api/v1/databases/${db}/index`, as());
      expect(overview.status, JSON.stringify(overview.body)).toBe(200);
      expect(overview.body.data).toMatchObject({ accountIndex: null, tables: [expect.objectContaining({ table: 'products', state: 'ready' })] });

      const health = await t.client.get('/health');
      expect(health.status).toBe(200);
      expect(health.body.data).toMatchObject({ status: 'degraded', checks: { store: { status: 'up' }, index: { status: 'down', detail: 'unavailable' } } });

      // A sync asked for now cannot write the index: it waits, and never ends failed.
      await onSource(["UPDATE products SET title = 'Copper kettle' WHERE id = 2"]);
      const sync = await t.client.post(`/api/v1/databases/${db}/index/sync`, {}, as());
      expect(sync.status, JSON.stringify(sync.body)).toBe(202);
      const jobId = sync.body.data.jobs[0].jobId as string;
      const job = () => t.server.services.searchIndex.service.indexedTables([db]).then(({ liveJobs }) => liveJobs.find((j) => j.id === jobId));
      // Long enough for a try against the stopped store (the runner claims the job at once) to have ended.
      for (let i = 0; i < 40; i++) {
        expect(await job(), 'the sync is still queued or running, not failed').toMatchObject({ id: jobId, status: expect.stringMatching(/^(queued|running)$/) });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      await s3.up();
    }

    const tables = await waitForIndex(t.client, owner.token, db);
    expect(tables.find((table) => table.table === 'products')?.job).toMatchObject({ status: 'done' });
    // A process that found the index down answers live for Retry-After seconds, then reads the index again.
    let after = await search({ databases: [db], query: 'kettle' });
    for (let i = 0; i < 60 && after.body.data.databases[0].source !== 'index'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      after = await search({ databases: [db], query: 'kettle' });
    }
    expect(after.body.data.databases[0]).toMatchObject({ source: 'index' });
    expect(ids(after)).toEqual([1, 2, 3]);
    const healthy = await t.client.get('/health');
    expect(healthy.body.data).toMatchObject({ status: 'healthy', checks: { index: { status: 'up' } } });
  }, 240_000);
});
