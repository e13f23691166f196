/**
 * The Indexing operations end to end: a SQLite file connected through the API is synced into Quarry's
 * search index at once; getDatabaseIndex and getIndexedTable show each table's state, syncDatabaseIndex brings rows
 * inserted, changed and deleted at the source into the index, updateIndexedTable turns semantic search on,
 * cancelIndexSync stops a sync, and a connection's indexing setting decides whether its tables are read from the
 * index or live. A search that reads indexed and live tables ranks them in one list.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spaceName } from '../../src/search-index/index-store.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex, waitForTable } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const file = `shop-${randomBytes(4).toString('hex')}.db`;

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let db: string;

const as = (user: TestUser = owner) => ({ token: user.token });
const indexOf = (id = db) => `/api/v1/databases/${id}/index`;
const tablePath = (table: string, id = db) => `${indexOf(id)}/tables/${encodeURIComponent(table)}`;
const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', body, { token: key.secret });
/** The owner's own SQLite folder: the only one its connections can name. */
const onSource = (statements: string[]) => onSqlite(join(t.dataDir, 'sqlite', owner.id), file, statements);
type Result = { table: string; primaryKey: Record<string, unknown>; rank: number; fields: Record<string, unknown>; snippet: string };
/** Rows of the owner's search space, all tables of every connection (the index itself, read through the store). */
const spaceRows = async () => (await t.server.services.searchIndex.store.space(spaceName(owner.id, 'test')))?.countRows() ?? 0;

/** A sync embeds with the real model, and the machine is shared. */
const SLOW = 120_000;

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onSource([
    'CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, price REAL)',
    `INSERT INTO products VALUES (1, 'Stainless steel kettle', 'Boils a litre of water in three minutes.', 39.5),
      (2, 'Cast iron pan', 'Season it with oil after washing.', 25), (3, 'Espresso machine', 'Fifteen bar pump and a steam wand.', 180),
      (4, 'Tea kettle', 'A whistling kettle for the stove.', 19), (5, 'Chef knife', 'Forged steel, twenty centimetres.', 60)`,
    "CREATE VIRTUAL TABLE products_fts USING fts5(title, body, content='products', content_rowid='id')",
    "INSERT INTO products_fts(products_fts) VALUES ('rebuild')",
    'CREATE TABLE reviews (id INTEGER PRIMARY KEY, body TEXT)',
    "INSERT INTO reviews VALUES (1, 'The kettle is loud but fast'), (2, 'Great pan, heavy'), (3, 'Coffee tastes burnt')",
    'CREATE TABLE loose (note TEXT)',
    "INSERT INTO loose VALUES ('Descale the kettle monthly'), ('Sharpen knives weekly')",
    'CREATE TABLE numbers (id INTEGER PRIMARY KEY, n INTEGER)',
    'CREATE TABLE big (id INTEGER PRIMARY KEY, body TEXT)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) INSERT INTO big SELECT i, 'entry ' || i || ' about gardening and weather' FROM n`,
  ]);
  const res = await t.client.post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: file, environment: 'test' }, as());
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  db = res.body.data.database.id;
  expect(res.body.data.database.indexing).toEqual({ enabled: true, syncIntervalMinutes: 60 });
  await waitForIndex(t.client, owner.token, db);
}, SLOW);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('getDatabaseIndex and getIndexedTable', () => {
  it('when a connection is made, then every table with a key and text is synced at once; the rest say why they are searched live', async () => {
    const res = await t.client.get(indexOf(), as());
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ databaseId: db, enabled: true, syncIntervalMinutes: 60, rowLimit: 100_000 });
    // The FTS5 table indexes `products` (its rows are products' rows) and `numbers` has no text: neither is listed.
    expect(data.tables.map((table: { table: string }) => table.table).sort()).toEqual(['big', 'loose', 'products', 'reviews']);
    const byName = Object.fromEntries(data.tables.map((table: { table: string }) => [table.table, table]));
    expect(byName.products).toMatchObject({
      state: 'ready', reason: null, semantic: false, semanticReady: false, rows: 5, rowLimit: 100_000, truncated: false,
      syncedAt: expect.any(String), sourceAsOf: expect.any(String),
      job: { table: 'products', status: 'done', trigger: 'connect', semantic: false, providerId: null, rowsDone: 5, rowsTotal: 5, rowsWritten: 5, etaSeconds: 0, error: null },
    });
    expect(byName.big).toMatchObject({ state: 'ready', rows: 600 });
    expect(byName.loose).toMatchObject({ state: 'not_indexed', reason: expect.stringContaining('primary key'), rows: 0 });
    expect(byName.loose.job).toBeUndefined();
  });

  it('when one table is asked for, then it has the same view; an unknown table is 404', async () => {
    const one = await t.client.get(tablePath('reviews'), as());
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ table: 'reviews', state: 'ready', rows: 3, job: { status: 'done', rowsDone: 3 } });
    const unknown = await t.client.get(tablePath('missing'), as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ resource: 'table', id: 'missing' });
  });
});

describe('searching indexed and live tables', () => {
  it('when a search reads an indexed table and a table without a key, then both rank in one list and the answer says it is approximate', async () => {
    const res = await search({ databases: [db], tables: ['products', 'loose'], query: 'kettle' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data;
    expect(data.liveTables).toEqual([{ databaseId: db, table: 'loose', reason: 'not_indexable' }]);
    expect(data.databases).toEqual([expect.objectContaining({ databaseId: db, source: 'mixed', approximate: true, status: 'ok', matches: 3, indexedAt: expect.any(String) })]);
    expect(data).toMatchObject({ approximate: true, total: 3 });
    const results = data.results as Result[];
    expect(results.map((r) => r.rank)).toEqual([1, 2, 3]);
    expect(results.filter((r) => r.table === 'products').map((r) => r.primaryKey.id).sort()).toEqual([1, 4]);
    expect(results.find((r) => r.table === 'loose')).toMatchObject({ fields: { note: 'Descale the kettle monthly' }, snippet: expect.stringContaining('<mark>kettle</mark>') });
  });

  it('when the whole database is searched, then an any-word query ranks rows of every indexed table by BM25, from the index alone', async () => {
    const res = await search({ databases: [db], tables: ['products', 'reviews'], query: 'kettle coffee' });
    const data = res.body.data;
    expect(data).toMatchObject({ approximate: false, liveTables: [], total: 4 });
    expect(data.databases[0]).toMatchObject({ source: 'index', approximate: false });
    expect(data.results.map((r: Result) => `${r.table}:${r.primaryKey.id}`).sort()).toEqual(['products:1', 'products:4', 'reviews:1', 'reviews:3']);
    // The stored row is shown: every column, including those outside the text.
    expect(data.results.find((r: Result) => r.table === 'products' && r.primaryKey.id === 1).fields).toEqual({ id: 1, title: 'Stainless steel kettle', body: 'Boils a litre of water in three minutes.', price: 39.5 });
  });
});

describe('syncDatabaseIndex', () => {
  it('when rows are inserted, changed and deleted at the source, then after the next sync they are found, found changed, or gone', async () => {
    await onSource([
      "INSERT INTO products VALUES (6, 'Gooseneck kettle', 'Pour-over precision.', 55)",
      "UPDATE products SET title = 'Moka pot', body = 'Stovetop coffee for two.' WHERE id = 3",
      'DELETE FROM products WHERE id = 4',
      // The external-content FTS5 index follows its table only when told (the live path reads it).
      "INSERT INTO products_fts(products_fts) VALUES ('rebuild')",
    ]);
    // Until the next sync the index answers as of its last one.
    const stale = await search({ databases: [db], tables: ['products'], query: 'kettle moka' });
    expect(stale.body.data.results.map((r: Result) => r.primaryKey.id).sort()).toEqual([1, 4]);

    const sync = await t.client.post(`${indexOf()}/sync`, {}, as());
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    expect(sync.body.data.jobs.map((job: { table: string }) => job.table).sort()).toEqual(['big', 'products', 'reviews']);
    for (const job of sync.body.data.jobs) expect(job).toMatchObject({ databaseId: db, trigger: 'manual', semantic: false });
    await waitForIndex(t.client, owner.token, db);

    const products = await t.client.get(tablePath('products'), as());
    expect(products.body.data).toMatchObject({ rows: 5, job: { status: 'done', rowsDone: 5, rowsWritten: 2, rowsSkipped: 3, rowsDeleted: 1 } });
    const fresh = await search({ databases: [db], tables: ['products'], query: 'kettle moka' });
    expect(fresh.body.data.results.map((r: Result) => r.primaryKey.id).sort()).toEqual([1, 3, 6]);
    expect(fresh.body.data.results.find((r: Result) => r.primaryKey.id === 3)).toMatchObject({ fields: { title: 'Moka pot' }, snippet: '<mark>Moka</mark> pot' });
    const reviews = await t.client.get(tablePath('reviews'), as());
    expect(reviews.body.data.job).toMatchObject({ status: 'done', rowsWritten: 0, rowsSkipped: 3 });
  }, SLOW);

  it('when named tables are synced, then only they are queued; an unknown one is 404 and one without a key is 400', async () => {
    const one = await t.client.post(`${indexOf()}/sync`, { tables: ['reviews'] }, as());
    expect(one.status).toBe(202);
    expect(one.body.data.jobs).toEqual([expect.objectContaining({ table: 'reviews', trigger: 'manual' })]);
    const unknown = await t.client.post(`${indexOf()}/sync`, { tables: ['reviews', 'missing'] }, as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ resource: 'table', id: 'missing' });
    const keyless = await t.client.post(`${indexOf()}/sync`, { tables: ['loose'] }, as());
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.details.errors[0]).toMatchObject({ path: '/tables/0', message: expect.stringContaining('primary key') });
    await waitForIndex(t.client, owner.token, db);
  }, SLOW);
});

describe('a table dropped at the source', () => {
  it('when a sync is asked for, of the whole database or of named tables, then a table gone from the schema leaves the index, as on the schedule', async () => {
    await onSource([
      'CREATE TABLE zeppelins (id INTEGER PRIMARY KEY, name TEXT)',
      "INSERT INTO zeppelins VALUES (1, 'Graf zeppelin'), (2, 'Hindenburg zeppelin')",
      'CREATE TABLE blimps (id INTEGER PRIMARY KEY, name TEXT)',
      "INSERT INTO blimps VALUES (1, 'Goodyear blimp')",
    ]);
    expect((await t.client.post(`${indexOf()}/sync`, { tables: ['zeppelins', 'blimps'] }, as())).status).toBe(202);
    await waitForIndex(t.client, owner.token, db);
    const found = async (word: string) => (await search({ databases: [db], query: word })).body.data.results.length;
    expect(await found('zeppelin')).toBe(2);
    expect(await found('blimp')).toBe(1);
    const before = await spaceRows();

    await onSource(['DROP TABLE zeppelins']);
    const whole = await t.client.post(`${indexOf()}/sync`, {}, as());
    expect(whole.status, JSON.stringify(whole.body)).toBe(202);
    await waitForIndex(t.client, owner.token, db);
    expect(await found('zeppelin')).toBe(0);
    expect(await spaceRows()).toBe(before - 2);
    expect((await t.client.get(tablePath('zeppelins'), as())).status).toBe(404);

    await onSource(['DROP TABLE blimps']);
    const named = await t.client.post(`${indexOf()}/sync`, { tables: ['reviews'] }, as());
    expect(named.status, JSON.stringify(named.body)).toBe(202);
    await waitForIndex(t.client, owner.token, db);
    expect(await found('blimp')).toBe(0);
    expect(await spaceRows()).toBe(before - 3);
  }, SLOW);
});

describe('updateIndexedTable and cancelIndexSync', () => {
  it('when semantic search is turned on, then a sync that embeds the rows is queued; cancelling it stops it, and cancelling again is 409', async () => {
    const on = await t.client.patch(tablePath('big'), { semantic: true }, as());
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.data).toMatchObject({ table: 'big', state: 'ready', semantic: true, semanticReady: false, job: { trigger: 'settings', semantic: true } });
    expect(['queued', 'running']).toContain(on.body.data.job.status);

    const cancelled = await t.client.delete(`${tablePath('big')}/sync`, as());
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data).toMatchObject({ jobId: on.body.data.job.jobId, status: 'cancelled', finishedAt: expect.any(String) });
    await t.server.services.searchIndex.runner.idle();
    const after = await t.client.get(tablePath('big'), as());
    // Still searchable by its words from the last finished sync; not by meaning.
    expect(after.body.data).toMatchObject({ state: 'ready', rows: 600, semantic: true, semanticReady: false, job: { status: 'cancelled' } });
    expect(after.body.data.job.rowsDone).toBeLessThan(600);

    const again = await t.client.delete(`${tablePath('big')}/sync`, as());
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { jobId: on.body.data.job.jobId, status: 'cancelled' } });

    const off = await t.client.patch(tablePath('big'), { semantic: false }, as());
    expect(off.body.data).toMatchObject({ semantic: false, semanticReady: false, state: 'ready' });
  }, SLOW);

  it('when filter columns are chosen, then columnsReady is false and a filter by them is 400 until the sync that writes them ends', async () => {
    const before = await t.client.get(tablePath('products'), as());
    expect(before.body.data).toMatchObject({ state: 'ready', filterableColumns: [], columnsReady: true });
    await t.server.services.searchIndex.runner.stop();
    try {
      const set = await t.client.patch(tablePath('products'), { filterableColumns: ['price'] }, as());
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data).toMatchObject({ state: 'ready', filterableColumns: ['price'], columnsReady: false, job: { trigger: 'settings', status: 'queued' } });
      const early = await search({ query: 'kettle', tables: ['products'], filter: { column: 'price', op: 'lt', value: 40 } });
      expect(early.status, JSON.stringify(early.body)).toBe(400);
      expect(early.body.error.details.errors?.[0] ?? early.body.error.details).toMatchObject({ message: expect.stringContaining('columnsReady') });
    } finally {
      t.server.services.searchIndex.runner.start();
    }
    const tables = await waitForIndex(t.client, owner.token, db);
    expect(tables.find((x) => x.table === 'products')).toMatchObject({ filterableColumns: ['price'], columnsReady: true });
    const later = await search({ query: 'kettle', tables: ['products'], filter: { column: 'price', op: 'lt', value: 40 } });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    // Kettles under 40: the stainless one (39.5), and the tea kettle (19) unless an earlier test deleted it.
    expect(later.body.data.results.map((r: Result) => r.primaryKey.id)).toContain(1);
    expect(later.body.data.results.every((r: Result & { fields: { price: number } }) => r.fields.price < 40)).toBe(true);
  }, SLOW);

  it('when the table cannot be indexed, is unknown or was never synced, then 400, 404 and 404', async () => {
    const keyless = await t.client.patch(tablePath('loose'), { semantic: true }, as());
    expect(keyless.status).toBe(400);
    const unknown = await t.client.patch(tablePath('missing'), { semantic: true }, as());
    expect(unknown.status).toBe(404);
    const empty = await t.client.patch(tablePath('reviews'), {}, as());
    expect(empty.status).toBe(400);
    const never = await t.client.delete(`${tablePath('loose')}/sync`, as());
    expect(never.status).toBe(404);
    expect(never.body.error.details).toMatchObject({ resource: 'indexJob', id: 'loose' });
  });
});

describe('whose index', () => {
  it("when another user names the connection, then every Indexing operation is the same 404 as an unknown id", async () => {
    const intruder = await registerUser(t.client);
    const answers = await Promise.all([
      t.client.get(indexOf(), as(intruder)),
      t.client.post(`${indexOf()}/sync`, {}, as(intruder)),
      t.client.get(tablePath('products'), as(intruder)),
      t.client.patch(tablePath('products'), { semantic: true }, as(intruder)),
      t.client.delete(`${tablePath('products')}/sync`, as(intruder)),
      t.client.get(indexOf('db_unknown'), as()),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
    expect((await t.client.get(tablePath('products'), as())).body.data.semantic).toBe(false);
  });

  it('when no JWT is sent, then 401', async () => {
    expect((await t.client.get(indexOf())).status).toBe(401);
  });
});

describe("a connection's indexing setting", () => {
  it('when indexing is turned off, then its rows leave the index and every search of it is live; turned on, it is synced again', async () => {
    const before = await spaceRows();
    expect(before).toBeGreaterThan(0);
    const off = await t.client.put(`/api/v1/databases/${db}`, { indexing: { enabled: false } }, as());
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data.database.indexing).toEqual({ enabled: false, syncIntervalMinutes: 60 });
    expect(await spaceRows()).toBe(0);

    const overview = await t.client.get(indexOf(), as());
    expect(overview.body.data).toMatchObject({ enabled: false, nextSyncAt: null });
    for (const table of overview.body.data.tables) expect(table).toMatchObject({ state: 'not_indexed', reason: expect.any(String) });
    const live = await search({ databases: [db], tables: ['products', 'reviews'], query: 'kettle' });
    expect(live.body.data.liveTables).toEqual([
      { databaseId: db, table: 'products', reason: 'indexing_off' },
      { databaseId: db, table: 'reviews', reason: 'indexing_off' },
    ]);
    expect(live.body.data.databases[0]).toMatchObject({ source: 'live', indexedAt: null });
    expect(live.body.data.results.map((r: Result) => `${r.table}:${r.primaryKey.id}`).sort()).toEqual(['products:1', 'products:6', 'reviews:1']);
    const sync = await t.client.post(`${indexOf()}/sync`, {}, as());
    expect(sync.status).toBe(409);
    expect(sync.body.error).toMatchObject({ code: 'CONFLICT', details: { databaseId: db } });

    const on = await t.client.put(`/api/v1/databases/${db}`, { indexing: { enabled: true } }, as());
    expect(on.body.data.database.indexing.enabled).toBe(true);
    const tables = await waitForIndex(t.client, owner.token, db);
    expect(tables.find((table) => table.table === 'products')).toMatchObject({ state: 'ready', job: { trigger: 'settings', status: 'done' } });
    expect(await spaceRows()).toBe(before);
  }, SLOW);

  it('when a connection is deleted, then its rows leave the index and the other connections keep theirs', async () => {
    const other = (await t.client.post('/api/v1/databases', { name: 'Shop again', engine: 'sqlite', database: file, environment: 'test' }, as())).body.data.database.id;
    await waitForIndex(t.client, owner.token, other);
    const both = await spaceRows();
    const deleted = await t.client.delete(`/api/v1/databases/${other}`, as());
    expect(deleted.status).toBe(200);
    expect(await spaceRows()).toBe(both / 2);
    const still = await search({ databases: [db], tables: ['products'], query: 'kettle' });
    expect(still.body.data.total).toBe(2);
  }, SLOW);
});
