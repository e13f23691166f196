/**
 * Totals of searchDatabases from the index: by default a search counts only the rows it ranks for its page
 * and flags a lower bound when more match; `exactTotal` counts every match up to the cap.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** More rows match "widget" than a page ranks (at least 100 and the next). */
const ROWS = 150;
let t: TestServer;
let owner: TestUser;
let key: TestKey;
let parts: { id: string };

const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', { databases: [parts.id], ...body }, { token: key.secret });

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  const values = Array.from({ length: ROWS }, (_, i) => `(${i + 1}, 'Widget number ${i + 1}', ${i % 2 === 0 ? "'blue'" : "'red'"})`).join(', ');
  await onSqlite(join(t.dataDir, 'sqlite', owner.id), 'parts.db', [
    'CREATE TABLE parts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, colour TEXT)',
    `INSERT INTO parts VALUES ${values}`,
  ]);
  parts = (await t.client.post('/api/v1/databases', { name: 'Parts', engine: 'sqlite', database: 'parts.db', environment: 'test' }, { token: owner.token })).body.data.database;
  await t.client.patch(`/api/v1/databases/${parts.id}/index/tables/parts`, { filterableColumns: ['colour'] }, { token: owner.token });
  await waitForIndex(t.client, owner.token, parts.id);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('totals from the index', () => {
  it('when more rows match than a page ranks and no exact total is asked, then the total is estimated from the rows holding the word, and says so', async () => {
    const res = await search({ query: 'widget', limit: 10 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Every row holds "widget": the estimate is the table's rows, though the index ranked only 101 of them.
    expect(res.body.data).toMatchObject({ total: ROWS, totalIsEstimate: true, hasMore: true });
    expect(res.body.data.results).toHaveLength(10);
    expect(res.body.data.databases[0]).toMatchObject({ matches: ROWS });
  });

  it('when a filter narrows the matches, then the total beyond the page is the rows ranked, a lower bound', async () => {
    const res = await search({ query: 'widget', limit: 10, filter: { column: 'colour', op: 'eq', value: 'blue' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ total: 75, totalIsEstimate: false });
    const few = await search({ query: 'widget number', limit: 10, filter: { column: 'colour', op: 'ne', value: 'green' } });
    expect(few.body.data).toMatchObject({ total: 100, totalIsEstimate: true });
  });

  it('when an exact total is asked, then every match is counted and the total is exact', async () => {
    const res = await search({ query: 'widget', limit: 10, exactTotal: true });
    expect(res.body.data).toMatchObject({ total: ROWS, totalIsEstimate: false });
    expect(res.body.data.databases[0]).toMatchObject({ matches: ROWS });
  });

  it('when a search counts facets, then they and the total are counted over every match, as with an exact total', async () => {
    const res = await search({ query: 'widget', limit: 10, facets: ['colour'] });
    expect(res.body.data).toMatchObject({ total: ROWS, totalIsEstimate: false, facetsAreEstimate: false });
    expect(res.body.data.facets.colour).toEqual([{ value: 'blue', count: 75 }, { value: 'red', count: 75 }]);
  });

  it('when the matches fit in what a page ranks, then the total is exact without asking', async () => {
    const res = await search({ query: '7 17', limit: 10 });
    expect(res.body.data).toMatchObject({ total: 2, totalIsEstimate: false });
  });
});
