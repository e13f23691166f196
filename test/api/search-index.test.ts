/**
 * searchDatabases answered from Quarry's own index: one BM25 ranking, exclusions, the reasons a table is
 * searched live, the sync schedule, and a connection with indexing off (the Indexing operations themselves are
 * test/api/indexing.test.ts).
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
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

describe('a connection with indexing off', () => {
  it('when the connection has indexing off, then its tables are not indexed and a sync is 409', async () => {
    const res = await t.client.get(`/api/v1/databases/${notes.id}/index`, as());
    expect(res.body.data).toMatchObject({ enabled: false, nextSyncAt: null });
    expect(res.body.data.tables[0]).toMatchObject({ table: 'notes', state: 'not_indexed', reason: expect.stringContaining('Indexing is off') });
    const sync = await t.client.post(`/api/v1/databases/${notes.id}/index/sync`, {}, as());
    expect(sync.status).toBe(409);
    expect(sync.body.error.code).toBe('CONFLICT');
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

  it('when a word or phrase is quoted, then a row must hold each of its words, and the other words still rank', async () => {
    const phrase = await search({ databases: [catalog.id], tables: ['products'], query: 'kettle "noise cancelling"' });
    expect(phrase.status, JSON.stringify(phrase.body)).toBe(200);
    expect(ids(phrase)).toEqual([1]);
    expect(phrase.body.data.results[0].snippet).toContain('<mark>noise</mark>');
    const word = await search({ databases: [catalog.id], tables: ['products'], query: 'headphones "walnut"' });
    expect(ids(word)).toEqual([3]);
    // Unquoted, any word may match: the kettle and the noise-cancelling headphones.
    const loose = await search({ databases: [catalog.id], tables: ['products'], query: 'kettle noise cancelling' });
    expect(ids(loose).sort()).toEqual([1, 2]);
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

describe('the sync schedule', () => {
  const nextSyncAt = async () => Date.parse((await t.client.get(`/api/v1/databases/${catalog.id}/index`, as())).body.data.nextSyncAt);

  it('when a connection is made, then its connect sync is the schedule\'s first and the next is one interval later', async () => {
    const due = await nextSyncAt();
    expect(due - Date.now()).toBeGreaterThan(55 * 60_000);
    expect(due - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    expect(await t.server.services.searchIndex.schedule.runSchedule()).toBe(0);
  });

  it('when the interval changes, then the schedule starts again from now, without a sync right away', async () => {
    const update = await t.client.put(`/api/v1/databases/${catalog.id}`, { indexing: { syncIntervalMinutes: 5 } }, as());
    expect(update.status).toBe(200);
    expect(update.body.data.database.indexing).toEqual({ enabled: true, syncIntervalMinutes: 5 });
    const due = await nextSyncAt();
    expect(due - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(due - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect(await t.server.services.searchIndex.schedule.runSchedule()).toBe(0);
  });

  it('when a connection is due, then the schedule queues one sync of each table, once however often it runs', async () => {
    // Five minutes on: the connection's next sync is past.
    await databaseConnectionRepository.update(catalog.id, { nextSyncAt: new Date(Date.now() - 1000) });
    const schedule = t.server.services.searchIndex.schedule;
    const [first, second] = await Promise.all([schedule.runSchedule(), schedule.runSchedule()]);
    expect(first + second).toBe(1);
    const products = (await waitForIndex(t.client, owner.token, catalog.id)).find((table) => table.table === 'products');
    expect(products?.job).toMatchObject({ status: 'done', trigger: 'schedule', rowsWritten: 0, rowsSkipped: 4 });
    expect((await nextSyncAt()) - Date.now()).toBeGreaterThan(4 * 60_000);
  });

  it('when indexing is turned on, then its sync of every table starts the schedule', async () => {
    const on = await t.client.put(`/api/v1/databases/${notes.id}`, { indexing: { enabled: true } }, as());
    expect(on.status).toBe(200);
    const index = await t.client.get(`/api/v1/databases/${notes.id}/index`, as());
    expect(Date.parse(index.body.data.nextSyncAt) - Date.now()).toBeGreaterThan(55 * 60_000);
    const tables = await waitForIndex(t.client, owner.token, notes.id);
    expect(tables[0]?.job).toMatchObject({ status: 'done', trigger: 'settings' });
    expect(await t.server.services.searchIndex.schedule.runSchedule()).toBe(0);
  });
});
