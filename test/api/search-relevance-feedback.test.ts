/**
 * searchDatabases' natural ranking with pseudo-relevance feedback on the rows it read (`relevanceFeedback`,
 * on by default): a row that answers in the words the best rows share climbs above one that only repeats a query
 * word, and `relevanceFeedback: false` keeps the plain BM25 order.
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
       (1, 'Descaling a kettle', 'Limescale in the kettle comes off with vinegar: descaling with vinegar dissolves limescale'),
       (2, 'Hard water', 'Limescale builds up in a kettle where hard water is heated; vinegar dissolves limescale'),
       (3, 'Exercise', 'A kettle bell is a cast iron weight for swings'),
       (4, 'Garden hose', 'Thirty metres of flexible hose'),
       (5, 'Bread', 'Flour, water, salt and yeast'),
       (6, 'Paint', 'Two coats of paint on the fence'),
       (7, 'Tea', 'Boil the water and steep the leaves')`,
  ]);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('searchDatabases with relevance feedback', () => {
  it('when a row shares the best row\'s words but few of the query\'s, then by default it ranks above a row that repeats a query word, and with relevanceFeedback false below it', async () => {
    const plain = await search({ query: 'descaling kettle', relevanceFeedback: false });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const fed = await search({ query: 'descaling kettle' });
    expect(fed.status, JSON.stringify(fed.body)).toBe(200);
    // Row 3 holds "kettle" in a short text; row 2 holds it once in a longer one, with the words the best row
    // shares (limescale, vinegar, dissolves).
    expect(ids(plain)).toEqual([1, 3, 2]);
    expect(ids(fed)).toEqual([1, 2, 3]);
  });

  it('when a cursor of the search without feedback is sent with it, then it is refused: the two are different rankings', async () => {
    const first = await search({ query: 'descaling kettle', limit: 1, relevanceFeedback: false });
    expect(first.body.data.nextCursor).toEqual(expect.any(String));
    const other = await search({ query: 'descaling kettle', limit: 1, cursor: first.body.data.nextCursor });
    expect(other.status).toBe(400);
  });
});
