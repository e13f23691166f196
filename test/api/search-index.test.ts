/**
 * Quarry's own search index (issue 27) through the API: the Indexing operations, syncs that follow the source
 * (rows inserted, changed and deleted), natural search answered from the index, and searches that mix indexed and
 * live tables in one ranking.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { syncAndWait, waitForIndex } from '../support/index-sync.js';
import { grantPlan } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let catalog: { id: string };
let notes: { id: string };

/** The owner's own SQLite folder: the only one its connections can name. */
const sqliteDir = () => join(t.dataDir, 'sqlite', owner.id);
const as = (user: TestUser = owner) => ({ token: user.token });
const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', body, { token: key.secret });
const ids = (res: { body: { data: { results: Array<{ primaryKey: { id: number } }> } } }) => res.body.data.results.map((r) => r.primaryKey.id);

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onSqlite(sqliteDir(), 'catalog.db', [
    'CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT NOT NULL, description TEXT, price REAL)',
    `INSERT INTO products VALUES
       (1, 'Wireless headphones', 'Over-ear headphones with active noise cancelling', 199),
       (2, 'Electric kettle', 'Boils a litre of water in three minutes', 39),
       (3, 'Headphone stand', 'Walnut stand for your headphones', 25),
       (4, 'Garden hose', 'Thirty metres of flexible hose', 29)`,
    'CREATE TABLE audit (at TEXT, message TEXT)',
    "INSERT INTO audit VALUES ('2026-11-25', 'price list of the kettle updated')",
  ]);
  await onSqlite(sqliteDir(), 'notes.db', [
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT)',
    "INSERT INTO notes VALUES (1, 'Return the headphones before Friday'), (2, 'Descale the kettle')",
  ]);
  catalog = (await t.client.post('/api/v1/databases', { name: 'Catalog', engine: 'sqlite', database: 'catalog.db', environment: 'test' }, as())).body.data.database;
  // Indexing off: every search of this connection is answered live.
  notes = (await t.client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'test', indexing: { enabled: false } }, as())).body.data.database;
  await waitForIndex(t.client, owner.token, catalog.id);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('getDatabaseIndex and getIndexedTable', () => {
  it('when a connection is made, then its table with a primary key is synced and ready, and a table without one is not indexed and says why', async () => {
    const res = await t.client.get(`/api/v1/databases/${catalog.id}/index`, as());
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ databaseId: catalog.id, enabled: true, syncIntervalMinutes: 60, rowLimit: 100_000 });
    const [audit, products] = [...res.body.data.tables].sort((a, b) => a.table.localeCompare(b.table));
    expect(products).toMatchObject({ table: 'products', state: 'ready', reason: null, semantic: false, rows: 4, truncated: false });
    expect(products.job).toMatchObject({ status: 'done', trigger: 'connect', rowsDone: 4, rowsWritten: 4, rowsSkipped: 0, rowsDeleted: 0, etaSeconds: 0 });
    expect(Date.parse(products.sourceAsOf)).toBeLessThanOrEqual(Date.parse(products.syncedAt));
    expect(audit).toMatchObject({ table: 'audit', state: 'not_indexed', reason: expect.stringContaining('primary key') });
    expect(audit.job).toBeUndefined();

    const one = await t.client.get(`/api/v1/databases/${catalog.id}/index/tables/products`, as());
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(products);
  });

  it('when the connection has indexing off, then its tables are not indexed and a sync is 409', async () => {
    const res = await t.client.get(`/api/v1/databases/${notes.id}/index`, as());
    expect(res.body.data).toMatchObject({ enabled: false, nextSyncAt: null });
    expect(res.body.data.tables[0]).toMatchObject({ table: 'notes', state: 'not_indexed', reason: expect.stringContaining('Indexing is off') });
    const sync = await t.client.post(`/api/v1/databases/${notes.id}/index/sync`, {}, as());
    expect(sync.status).toBe(409);
    expect(sync.body.error.code).toBe('CONFLICT');
  });

  it('when another user, an unknown table or no JWT asks, then 404, 404 and 401', async () => {
    const intruder = await registerUser(t.client);
    for (const res of [
      await t.client.get(`/api/v1/databases/${catalog.id}/index`, as(intruder)),
      await t.client.post(`/api/v1/databases/${catalog.id}/index/sync`, {}, as(intruder)),
      await t.client.patch(`/api/v1/databases/${catalog.id}/index/tables/products`, { semantic: true }, as(intruder)),
      await t.client.delete(`/api/v1/databases/${catalog.id}/index/tables/products/sync`, as(intruder)),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const unknown = await t.client.get(`/api/v1/databases/${catalog.id}/index/tables/missing`, as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ resource: 'table', id: 'missing' });
    expect((await t.client.get(`/api/v1/databases/${catalog.id}/index`)).status).toBe(401);
  });

  it('when semantic search is asked of a table without a primary key, or a sync of one, then 400 names it', async () => {
    const patch = await t.client.patch(`/api/v1/databases/${catalog.id}/index/tables/audit`, { semantic: true }, as());
    expect(patch.status).toBe(400);
    expect(patch.body.error.details.errors[0].message).toContain('primary key');
    const sync = await t.client.post(`/api/v1/databases/${catalog.id}/index/sync`, { tables: ['audit'] }, as());
    expect(sync.status).toBe(400);
    expect(sync.body.error.details.errors[0]).toMatchObject({ path: '/tables/0' });
  });

  it('when the newest sync has ended, then cancelling is 409', async () => {
    const res = await t.client.delete(`/api/v1/databases/${catalog.id}/index/tables/products/sync`, as());
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: { status: 'done' } });
  });
});

describe('searchDatabases from the index', () => {
  it('when every selected table is indexed, then the index answers with one BM25 ranking, any word matching', async () => {
    const res = await search({ databases: [catalog.id], tables: ['products'], query: 'noise cancelling headphones for the garden' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ approximate: false, liveTables: [], unindexedTables: [], totalIsEstimate: false, total: 3 });
    expect(ids(res)[0]).toBe(1);
    expect(ids(res).sort()).toEqual([1, 3, 4]);
    expect(res.body.data.databases).toEqual([expect.objectContaining({ databaseId: catalog.id, source: 'index', status: 'ok', matches: 3, approximate: false, indexedAt: expect.any(String) })]);
    const [first] = res.body.data.results;
    expect(first).toMatchObject({ id: `${catalog.id}:products:1`, table: 'products', primaryKey: { id: 1 }, rank: 1, matchedColumns: ['title', 'description'] });
    expect(first.fields).toEqual({ id: 1, title: 'Wireless headphones', description: 'Over-ear headphones with active noise cancelling', price: 199 });
    expect(first.snippet).toContain('<mark>headphones</mark>');
    const scores = res.body.data.results.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('when a word is excluded with -word, then rows containing it are left out', async () => {
    const res = await search({ databases: [catalog.id], tables: ['products'], query: 'headphones -walnut' });
    expect(ids(res)).toEqual([1]);
  });

  it('when a row is inserted, changed and deleted at the source, then after the next sync it is found, found changed, or gone', async () => {
    await onSqlite(sqliteDir(), 'catalog.db', [
      "INSERT INTO products VALUES (5, 'Bluetooth speaker', 'Waterproof speaker for the garden', 59)",
      "UPDATE products SET description = 'Boils a litre in three minutes, with a tea infuser' WHERE id = 2",
      'DELETE FROM products WHERE id = 3',
    ]);
    const before = await search({ databases: [catalog.id], tables: ['products'], query: 'speaker infuser stand' });
    expect(ids(before)).toEqual([3]);

    const [products] = await syncAndWait(t.client, owner.token, catalog.id, ['products']);
    expect(products!.job).toMatchObject({ status: 'done', trigger: 'manual', rowsDone: 4, rowsWritten: 2, rowsSkipped: 2, rowsDeleted: 1 });
    const after = await search({ databases: [catalog.id], tables: ['products'], query: 'speaker infuser stand' });
    expect(ids(after).sort()).toEqual([2, 5]);
    const kettle = after.body.data.results.find((r: { primaryKey: { id: number } }) => r.primaryKey.id === 2);
    expect(kettle.fields.description).toBe('Boils a litre in three minutes, with a tea infuser');
    expect(kettle.snippet).toContain('<mark>infuser</mark>');
  });

  it('when a search touches indexed and live tables, then all rank in one list and the answer says it is approximate', async () => {
    const res = await search({ query: 'kettle', limit: 10 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data;
    expect(data.approximate).toBe(true);
    expect(data.liveTables).toEqual(expect.arrayContaining([
      { databaseId: notes.id, table: 'notes', reason: 'indexing_off' },
      { databaseId: catalog.id, table: 'audit', reason: 'not_indexable' },
    ]));
    expect(data.results.map((r: { rank: number }) => r.rank)).toEqual(data.results.map((_: unknown, i: number) => i + 1));
    expect(new Set(data.results.map((r: { table: string }) => r.table))).toEqual(new Set(['products', 'notes', 'audit']));
    const byId = Object.fromEntries(data.databases.map((d: { databaseId: string }) => [d.databaseId, d]));
    // The catalog's products come from the index and its keyless audit table is read live.
    expect(byId[catalog.id]).toMatchObject({ source: 'mixed', approximate: true, indexedAt: expect.any(String) });
    expect(byId[notes.id]).toMatchObject({ source: 'live', approximate: true, indexedAt: null });
    expect(data.total).toBe(data.databases.reduce((sum: number, d: { matches: number }) => sum + d.matches, 0));
  });

  it('when the caller asks for live results, names columns or uses boolean mode, then the tables are searched live and say why', async () => {
    for (const [body, reason] of [
      [{ live: true }, 'live_requested'],
      [{ columns: ['title'] }, 'columns_selected'],
      [{ searchMode: 'boolean' }, 'boolean_mode'],
    ] as const) {
      const res = await search({ databases: [catalog.id], tables: ['products'], query: 'headphones', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.liveTables).toEqual([{ databaseId: catalog.id, table: 'products', reason }]);
      expect(res.body.data.databases[0]).toMatchObject({ source: 'live', indexedAt: null });
      expect(ids(res)).toContain(1);
    }
  });
});

describe('schedules and connection changes', () => {
  it('when a connection is due, then the schedule queues one sync of each table, once however often it runs', async () => {
    const update = await t.client.put(`/api/v1/databases/${catalog.id}`, { indexing: { syncIntervalMinutes: 5 } }, as());
    expect(update.status).toBe(200);
    expect(update.body.data.database.indexing).toEqual({ enabled: true, syncIntervalMinutes: 5 });
    const service = t.server.services.searchIndex.service;
    const [first, second] = await Promise.all([service.runSchedule(), service.runSchedule()]);
    expect(first + second).toBe(1);
    const [products] = await waitForIndex(t.client, owner.token, catalog.id);
    expect(products!.job).toMatchObject({ status: 'done', trigger: 'schedule', rowsWritten: 0, rowsSkipped: 4 });
    const index = await t.client.get(`/api/v1/databases/${catalog.id}/index`, as());
    expect(Date.parse(index.body.data.nextSyncAt) - Date.now()).toBeGreaterThan(4 * 60_000);
  });

  it('when indexing is turned off, then the rows leave the index and searches go live; turned on, they are synced again', async () => {
    await t.client.put(`/api/v1/databases/${catalog.id}`, { indexing: { enabled: false } }, as());
    const off = await search({ databases: [catalog.id], tables: ['products'], query: 'headphones' });
    expect(off.body.data.liveTables).toEqual([{ databaseId: catalog.id, table: 'products', reason: 'indexing_off' }]);
    const space = await t.server.services.searchIndex.store.space(`space_${owner.id}_test`);
    expect(await space!.countRows()).toBe(0);

    await t.client.put(`/api/v1/databases/${catalog.id}`, { indexing: { enabled: true } }, as());
    await waitForIndex(t.client, owner.token, catalog.id);
    const on = await search({ databases: [catalog.id], tables: ['products'], query: 'headphones' });
    expect(on.body.data.databases[0].source).toBe('index');
    expect(await space!.countRows()).toBe(4);
  });

  it('when the connection is deleted, then its rows leave the index', async () => {
    const space = await t.server.services.searchIndex.store.space(`space_${owner.id}_test`);
    expect(await space!.countRows()).toBeGreaterThan(0);
    expect((await t.client.delete(`/api/v1/databases/${catalog.id}`, as())).status).toBe(200);
    expect(await space!.countRows()).toBe(0);
  });
});
