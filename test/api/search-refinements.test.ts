/**
 * What people expect of a search box, through the API over Quarry's index: filters on chosen columns,
 * sorting, facets, typo tolerance and weights per database. A shop's catalogue in SQLite and its clearance list in
 * PostgreSQL, both synced into the index.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onPostgres, onSqlite, postgresConnection } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const pgTable = `clearance_${randomBytes(4).toString('hex')}`;
let t: TestServer;
let owner: TestUser;
let key: TestKey;
let shop: { id: string };
let clearance: { id: string };
let shopPath: string;

const CATEGORIES = ['audio', 'kitchen', 'garden'];
/** 60 products: every third of each kind, prices 10..600, every fifth out of stock, dates one day apart. */
const products = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  title: `${['Wireless headphones', 'Electric kettle', 'Garden hose'][i % 3]} model ${i + 1}`,
  category: CATEGORIES[i % 3]!,
  price: (i + 1) * 10,
  inStock: i % 5 !== 0,
  added: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10),
  note: i % 7 === 0 ? null : 'popular',
}));

const as = () => ({ token: owner.token });
const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', { limit: 100, ...body }, { token: key.secret });
const ids = (res: { body: { data: { results: Array<{ primaryKey: { id: number } }> } } }) => res.body.data.results.map((r) => r.primaryKey.id);

async function sqliteCount(sql: string): Promise<number> {
  const db = new sqlite3.Database(shopPath, sqlite3.OPEN_READONLY);
  try {
    return await new Promise((resolve, reject) => db.get(sql, (error, row: { n: number }) => (error ? reject(error) : resolve(row.n))));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  const values = products.map((p) => `(${p.id}, '${p.title}', '${p.category}', ${p.price}, ${p.inStock ? 1 : 0}, '${p.added}', ${p.note ? `'${p.note}'` : 'NULL'})`).join(', ');
  shopPath = await onSqlite(join(t.dataDir, 'sqlite', owner.id), 'shop.db', [
    'CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT NOT NULL, category TEXT, price REAL, in_stock BOOLEAN, added DATE, note TEXT)',
    `INSERT INTO products VALUES ${values}`,
  ]);
  await onPostgres([
    `CREATE TABLE ${pgTable} (id int PRIMARY KEY, title text NOT NULL, category varchar(40), price numeric(10,2))`,
    `INSERT INTO ${pgTable} VALUES (1001, 'Refurbished wireless headphones', 'audio', 35), (1002, 'Dented kettle', 'kitchen', 12)`,
  ]);
  shop = (await t.client.post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, as())).body.data.database;
  clearance = (await t.client.post('/api/v1/databases', postgresConnection({ name: 'Clearance', tables: [pgTable] }), as())).body.data.database;
  const set = await t.client.patch(`/api/v1/databases/${shop.id}/index/tables/products`, {
    filterableColumns: ['category', 'price', 'in_stock', 'added', 'note'], sortableColumns: ['price', 'added'],
  }, as());
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  expect(set.body.data.eligibleColumns).toEqual(expect.arrayContaining([{ column: 'price', kind: 'number' }, { column: 'in_stock', kind: 'boolean' }, { column: 'added', kind: 'date' }, { column: 'category', kind: 'text' }]));
  await t.client.patch(`/api/v1/databases/${clearance.id}/index/tables/${pgTable}`, { filterableColumns: ['category', 'price'], sortableColumns: ['price'] }, as());
  await waitForIndex(t.client, owner.token, shop.id);
  await waitForIndex(t.client, owner.token, clearance.id);
}, 90_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await onPostgres([`DROP TABLE IF EXISTS ${pgTable}`]).catch(() => undefined);
  await t?.stop();
});

describe('filter', () => {
  const expectIds = (predicate: (p: (typeof products)[number]) => boolean) => products.filter(predicate).map((p) => p.id).sort((a, b) => a - b);

  it.each([
    ['eq on text', { column: 'category', op: 'eq', value: 'audio' }, (p: (typeof products)[number]) => p.category === 'audio'],
    ['ne on text', { column: 'category', op: 'ne', value: 'audio' }, (p: (typeof products)[number]) => p.category !== 'audio'],
    ['in on text', { column: 'category', op: 'in', values: ['audio', 'garden'] }, (p: (typeof products)[number]) => p.category !== 'kitchen'],
    ['lt on a number', { column: 'price', op: 'lt', value: 100 }, (p: (typeof products)[number]) => p.price < 100],
    ['lte on a number', { column: 'price', op: 'lte', value: 100 }, (p: (typeof products)[number]) => p.price <= 100],
    ['gt on a number', { column: 'price', op: 'gt', value: 550 }, (p: (typeof products)[number]) => p.price > 550],
    ['gte on a date', { column: 'added', op: 'gte', value: '2026-02-20' }, (p: (typeof products)[number]) => p.added >= '2026-02-20'],
    ['eq on a boolean', { column: 'in_stock', op: 'eq', value: false }, (p: (typeof products)[number]) => !p.inStock],
    ['isNull', { column: 'note', op: 'isNull', value: true }, (p: (typeof products)[number]) => p.note === null],
    ['isNull false', { column: 'note', op: 'isNull', value: false }, (p: (typeof products)[number]) => p.note !== null],
    ['and of a range', { and: [{ column: 'price', op: 'gte', value: 100 }, { column: 'price', op: 'lt', value: 200 }] }, (p: (typeof products)[number]) => p.price >= 100 && p.price < 200],
    ['or', { or: [{ column: 'category', op: 'eq', value: 'garden' }, { column: 'price', op: 'lt', value: 40 }] }, (p: (typeof products)[number]) => p.category === 'garden' || p.price < 40],
    ['not', { not: { column: 'category', op: 'eq', value: 'kitchen' } }, (p: (typeof products)[number]) => p.category !== 'kitchen'],
  ])('when filtering with %s, then exactly the rows that meet it are found', async (_label, filter, predicate) => {
    const res = await search({ query: 'headphones kettle hose', databases: [shop.id], filter });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort((a, b) => a - b)).toEqual(expectIds(predicate));
    expect(res.body.data.total).toBe(expectIds(predicate).length);
  });

  it('when a filter names a column one table lacks, then that table is left out and listed', async () => {
    const res = await search({ query: 'headphones kettle', filter: { column: 'in_stock', op: 'eq', value: true } });
    expect(res.status).toBe(200);
    expect(res.body.data.excludedTables).toEqual([{ databaseId: clearance.id, table: pgTable, reason: 'missing_column', column: 'in_stock' }]);
    expect(new Set(res.body.data.results.map((r: { databaseId: string }) => r.databaseId))).toEqual(new Set([shop.id]));
  });

  it('when both tables have the filter column, then it applies to both (one index column per name and kind)', async () => {
    const res = await search({ query: 'headphones', filter: { column: 'price', op: 'lt', value: 40 } });
    expect(res.body.data.excludedTables).toEqual([]);
    expect(ids(res).sort((a, b) => a - b)).toEqual([1, 1001]);
  });

  it.each([
    [{ column: 'colour', op: 'eq', value: 'red' }, '/filter/column', 'colour'],
    [{ and: [{ column: 'price', op: 'lt', value: 5 }, { column: 'weight', op: 'gt', value: 1 }] }, '/filter/and/1/column', 'weight'],
    [{ column: 'price', op: 'lt', value: 'cheap' }, '/filter/op', 'compares numbers or dates'],
    [{ column: 'category', op: 'eq', value: 3 }, '/filter/value', 'does not fit column "category"'],
    [{ column: 'category', op: 'in' }, '/filter', 'needs `values`'],
    [{ column: 'title', op: 'eq', value: 'x' }, '/filter/column', 'title'],
  ])('when the filter is %j, then 400 names %s', async (filter, path, words) => {
    const res = await search({ query: 'headphones', databases: [shop.id], filter });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.errors[0].path).toBe(path);
    expect(res.body.error.details.errors[0].message).toContain(words);
  });

  it.each([
    ['filter', { filter: { column: 'colour', op: 'eq', value: 'red' } }, 'filterableColumns'],
    ['sort', { sort: [{ column: 'colour', direction: 'asc' }] }, 'sortableColumns'],
    ['facets', { facets: ['colour'] }, 'filterableColumns'],
  ])('when %s names a column no table offers, then the message says which request makes it so (method and path), not an operationId', async (_label, refinement, setting) => {
    const res = await search({ query: 'headphones', databases: [shop.id], ...refinement });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const message: string = res.body.error.details.errors[0].message;
    expect(message).toContain(`PATCH /api/v1/databases/{databaseId}/index/tables/{table} with {"${setting}"`);
    expect(message).not.toMatch(/updateIndexedTable/);
  });

  it('when a filter holds quotes and SQL, then it is a value like any other', async () => {
    const res = await search({ query: 'headphones', databases: [shop.id], filter: { column: 'category', op: 'eq', value: "audio' OR '1'='1" } });
    expect(res.status).toBe(200);
    expect(res.body.data.results).toEqual([]);
  });
});

describe('sort', () => {
  it('when sorted by price, then pages follow the price order without repeats or gaps, and the cursor keeps it', async () => {
    const body = { query: 'headphones kettle hose', databases: [shop.id], sort: [{ column: 'price', direction: 'desc' }], limit: 7 };
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await search(cursor ? { ...body, cursor } : body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.data.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(products.map((p) => p.id).sort((a, b) => b - a));
  });

  it('when sorted by a column with ties, then ties are broken by relevance the same way on every page', async () => {
    const body = { query: 'headphones', databases: [shop.id], sort: [{ column: 'added' }] };
    const [a, b] = [await search(body), await search({ ...body, limit: 5, offset: 5 })];
    expect(ids(b)).toEqual(ids(a).slice(5, 10));
  });

  it('when a sort column is not sortable, then 400 names it', async () => {
    const res = await search({ query: 'headphones', sort: [{ column: 'category' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0]).toMatchObject({ path: '/sort/0/column' });
  });
});

describe('facets', () => {
  it('when facets are asked, then each value counts the matches over the whole result, as a direct SQL count does', async () => {
    const res = await search({ query: 'headphones kettle', databases: [shop.id], facets: ['category', 'in_stock'], limit: 3 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.facetsAreEstimate).toBe(false);
    const audio = await sqliteCount("SELECT COUNT(*) AS n FROM products WHERE category = 'audio'");
    const kitchen = await sqliteCount("SELECT COUNT(*) AS n FROM products WHERE category = 'kitchen'");
    expect(res.body.data.facets.category).toEqual(expect.arrayContaining([{ value: 'audio', count: audio }, { value: 'kitchen', count: kitchen }]));
    expect(res.body.data.facets.category).toHaveLength(2);
    const outOfStock = await sqliteCount("SELECT COUNT(*) AS n FROM products WHERE in_stock = 0 AND category IN ('audio', 'kitchen')");
    expect(res.body.data.facets.in_stock).toEqual([{ value: true, count: audio + kitchen - outOfStock }, { value: false, count: outOfStock }]);
  });

  it('when a facet and a filter combine, then the counts are those of the filtered matches', async () => {
    const res = await search({ query: 'headphones kettle hose', databases: [shop.id], facets: ['category'], filter: { column: 'price', op: 'lt', value: 100 } });
    const expected = await sqliteCount("SELECT COUNT(*) AS n FROM products WHERE price < 100 AND category = 'audio'");
    expect(res.body.data.facets.category).toContainEqual({ value: 'audio', count: expected });
  });

  it('when a facet column is not filterable, then 400 names it', async () => {
    const res = await search({ query: 'headphones', databases: [shop.id], facets: ['title'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0]).toMatchObject({ path: '/facets/0' });
  });
});

describe('typo tolerance', () => {
  it('when a word of 5-8 letters has one typo, then it is corrected, found and reported', async () => {
    const res = await search({ query: 'kettel', databases: [shop.id] });
    expect(res.body.data.corrections).toEqual([{ word: 'kettel', correctedTo: 'kettle' }]);
    expect(ids(res).length).toBe(20);
    expect(res.body.data.results[0].snippet).toContain('<mark>kettle</mark>');
  });

  it('when a word of 9 letters or more has two typos, then it is corrected; 5-8 letters with two, it is not', async () => {
    expect((await search({ query: 'headfones', databases: [shop.id] })).body.data.corrections).toEqual([{ word: 'headfones', correctedTo: 'headphones' }]);
    expect((await search({ query: 'wirelesss', databases: [shop.id] })).body.data.corrections).toEqual([{ word: 'wirelesss', correctedTo: 'wireless' }]);
    const two = await search({ query: 'ketlte', databases: [shop.id] });
    expect(two.body.data.corrections).toEqual([]);
    expect(two.body.data.results).toEqual([]);
  });

  it('when a word is short, spelled right, or tolerance is off, then nothing is corrected', async () => {
    expect((await search({ query: 'hoes', databases: [shop.id] })).body.data.corrections).toEqual([]);
    const exact = await search({ query: 'kettle', databases: [shop.id] });
    expect(exact.body.data.corrections).toEqual([]);
    const off = await search({ query: 'kettel', databases: [shop.id], typoTolerance: false });
    expect(off.body.data).toMatchObject({ corrections: [], results: [], total: 0 });
  });
});

describe('weights per database', () => {
  it('when a database is weighted up or down, then its scores scale and its rows rise above or fall below the other database', async () => {
    const query = 'wireless headphones model';
    const plain = await search({ query, limit: 61 });
    const refurbished = (res: typeof plain) => res.body.data.results.findIndex((r: { databaseId: string }) => r.databaseId === clearance.id);
    const weighted = await search({ query, limit: 61, databaseWeights: { [clearance.id]: 10, [shop.id]: 0.1 } });
    expect(refurbished(weighted)).toBe(0);
    expect(weighted.body.data.results[0].score).toBeCloseTo(plain.body.data.results[refurbished(plain)].score * 10, 4);
    const down = await search({ query, limit: 61, databaseWeights: { [clearance.id]: 0 } });
    expect(down.body.data.results.at(-1).databaseId).toBe(clearance.id);
  });

  it('when a weight names a database the search does not read, then 400', async () => {
    const res = await search({ query: 'headphones', databases: [shop.id], databaseWeights: { [clearance.id]: 2 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0].path).toBe(`/databaseWeights/${clearance.id}`);
  });
});
