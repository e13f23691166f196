/**
 * searchDatabases with `queryExpansion`: pseudo-relevance feedback (RM3) over the index, so that rows
 * which answer the query in the words of its best rows, not its own, are found too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { indexedSqliteFixture, resultIds, type SearchFixture } from '../support/search-fixture.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let fixture: SearchFixture;

const search = (body: Record<string, unknown>) => fixture.search(body);
const ids = resultIds;

beforeAll(async () => {
  t = await startTestServer();
  fixture = await indexedSqliteFixture(t, 'home.db', 'Home', [
    'CREATE TABLE tips (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)',
    `INSERT INTO tips VALUES
       (1, 'Descaling a kettle', 'Limescale in the kettle comes off with vinegar'),
       (2, 'Hard water', 'Limescale builds up where hard water is heated; vinegar dissolves it'),
       (3, 'Garden hose', 'Thirty metres of flexible hose'),
       (4, 'Bread', 'Flour, water, salt and yeast')`,
  ]);
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
