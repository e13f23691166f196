/**
 * searchDatabases with `queryExpansion` (issue 33): pseudo-relevance feedback (RM3) over the index, so that rows
 * which answer the query in the words of its best rows, not its own, are found too.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let catalog: { id: string };

const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', { databases: [catalog.id], ...body }, { token: key.secret });
const ids = (res: { body: { data: { results: Array<{ primaryKey: { id: number } }> } } }) => res.body.data.results.map((r) => r.primaryKey.id);

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onSqlite(join(t.dataDir, 'sqlite', owner.id), 'home.db', [
    'CREATE TABLE tips (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)',
    `INSERT INTO tips VALUES
       (1, 'Descaling a kettle', 'Limescale in the kettle comes off with vinegar'),
       (2, 'Hard water', 'Limescale builds up where hard water is heated; vinegar dissolves it'),
       (3, 'Garden hose', 'Thirty metres of flexible hose'),
       (4, 'Bread', 'Flour, water, salt and yeast')`,
  ]);
  catalog = (await t.client.post('/api/v1/databases', { name: 'Home', engine: 'sqlite', database: 'home.db', environment: 'test' }, { token: owner.token })).body.data.database;
  await waitForIndex(t.client, owner.token, catalog.id);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('searchDatabases with queryExpansion', () => {
  it('when a row answers in the words of the best row but not the query\'s, then expansion finds it after the best row, and the plain search does not', async () => {
    const plain = await search({ query: 'descaling' });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(ids(plain)).toEqual([1]);
    const expanded = await search({ query: 'descaling', queryExpansion: true });
    expect(expanded.status, JSON.stringify(expanded.body)).toBe(200);
    expect(ids(expanded)).toEqual([1, 2]);
  });

  it('when a cursor of the plain search is sent with expansion, then it is refused: the two are different rankings', async () => {
    const first = await search({ query: 'water', limit: 1 });
    expect(first.body.data.nextCursor).toEqual(expect.any(String));
    const other = await search({ query: 'water', limit: 1, queryExpansion: true, cursor: first.body.data.nextCursor });
    expect(other.status).toBe(400);
  });
});
