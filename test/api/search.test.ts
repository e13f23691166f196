/**
 * searchDatabases against real engines: the same corpus in PostgreSQL (GIN), MariaDB (FULLTEXT) and SQLite (FTS5),
 * synced into Quarry's index when connected, searched through the API in natural mode (from the index, or live when
 * asked) and boolean mode (live), paged, highlighted, with a hanging and a broken database, other users' and other
 * environments' connections, hostile names and hostile queries.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { searchRecordRepository } from '../../src/repositories/search-record-repository.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { CORPUS, FILLER_ROWS, seedMysql, seedPostgres, seedSqlite } from '../support/search-corpus.js';
import { mysqlConnection, onMysql, onPostgres, onSqlite, postgresConnection } from '../support/seed-databases.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const pgTable = `products_${suffix}`;
const pgPlain = `plain_${suffix}`;
const pgWeird = `we"ird ta\`ble's ${suffix}`;
const myTable = `products_${suffix}`;
const myPlain = `plain_${suffix}`;
const myWeird = `we"ird ta\`ble's ${suffix}`;
const liteFile = `search-${suffix}.db`;
// Not a single quote in the column: discovery's columnsInExpression misreads such a name (reported).
const weirdColumn = `ti"tle \`x\``;

const pgQuote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const myQuote = (name: string) => `\`${name.replace(/`/g, '``')}\``;

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let db: { pg: string; my: string; lite: string };

beforeAll(async () => {
  t = await startTestServer({ SEARCH_TIMEOUT_MS: '2000' });
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'enterprise');
  key = await createKey(t.client, owner, { rateLimitTier: 'enterprise', environment: 'test' });
  await seedPostgres(pgQuote(pgTable));
  await seedPostgres(pgQuote(pgWeird), CORPUS.slice(0, 6), { title: weirdColumn, body: 'body' });
  await onPostgres([
    `CREATE TABLE ${pgQuote(pgPlain)} (code varchar(20) PRIMARY KEY, note text)`,
    `INSERT INTO ${pgQuote(pgPlain)} VALUES ('n1', 'Remember to order more battery packs'), ('n2', 'Nothing to see here')`,
  ]);
  await seedMysql(myQuote(myTable));
  await seedMysql(myQuote(myWeird), CORPUS.slice(0, 6), { title: weirdColumn, body: 'body' });
  await onMysql([
    `CREATE TABLE ${myQuote(myPlain)} (code VARCHAR(20) PRIMARY KEY, note TEXT)`,
    `INSERT INTO ${myQuote(myPlain)} VALUES ('n1', 'Remember to order more battery packs'), ('n2', 'Nothing 100% _special_ here')`,
  ]);
  const sqliteDir = join(t.dataDir, 'sqlite', owner.id);
  await seedSqlite(sqliteDir, liteFile, 'products');
  await onSqlite(sqliteDir, liteFile, [
    'CREATE TABLE notes (code TEXT PRIMARY KEY, note TEXT)',
    "INSERT INTO notes VALUES ('n1', 'Remember to order more battery packs'), ('n2', 'Nothing to see here')",
  ]);
  await seedSqlite(sqliteDir, liteFile, `we"ird ta\`ble's`, CORPUS.slice(0, 6));

  const create = async (body: Record<string, unknown>) => {
    const res = await t.client.post('/api/v1/databases', body, { token: owner.token });
    if (res.status !== 201) throw new Error(`connection failed: ${JSON.stringify(res.body)}`);
    return res.body.data.database.id as string;
  };
  db = {
    pg: await create(postgresConnection({ name: 'Catalog (PostgreSQL)', tables: [pgTable, pgPlain, pgWeird] })),
    my: await create(mysqlConnection({ name: 'Catalog (MariaDB)', tables: [myTable, myPlain, myWeird] })),
    lite: await create({ name: 'Catalog (SQLite)', engine: 'sqlite', database: liteFile, environment: 'test' }),
  };
  // Connecting synced every table into the index; the tests below read it (or ask for live results) from a quiet one.
  for (const id of Object.values(db)) await waitForIndex(t.client, owner.token, id);
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await onPostgres([pgTable, pgPlain, pgWeird].map((n) => `DROP TABLE IF EXISTS ${pgQuote(n)}`)).catch(() => undefined);
  await onMysql([myTable, myPlain, myWeird].map((n) => `DROP TABLE IF EXISTS ${myQuote(n)}`)).catch(() => undefined);
  await t.stop();
}, 60_000);

const search = (body: Record<string, unknown>, secret = key.secret) => t.client.post('/api/v1/search', body, { token: secret });
const catalogs = () => ({ databases: [db.pg, db.my, db.lite], tables: [pgTable, 'products'] });
type Result = { id: string; databaseId: string; table: string; primaryKey: Record<string, unknown>; rank: number; score: number; snippet: string; matchedColumns: string[]; fields: Record<string, unknown> };
const rowIds = (results: Result[], databaseId: string) => results.filter((r) => r.databaseId === databaseId).map((r) => Number(r.primaryKey.id)).sort((a, b) => a - b);

describe('searchDatabases: ranked results on three engines', () => {
  it('when a natural query names two words, then the index ranks every engine\'s rows in one list, any word matching, a row scoring the same whichever database holds it', async () => {
    const res = await search({ ...catalogs(), query: 'wireless headphones', limit: 20 });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.databases.map((d: { engine: string }) => d.engine)).toEqual(['postgres', 'mysql', 'sqlite']);
    for (const database of data.databases) {
      expect(database).toMatchObject({ status: 'ok', source: 'index', approximate: false, matches: 5, indexedAt: expect.any(String) });
    }
    expect(data).toMatchObject({ approximate: false, liveTables: [], unindexedTables: [], total: 15, totalIsEstimate: false });
    for (const id of [db.pg, db.my, db.lite]) expect(rowIds(data.results, id)).toEqual([1, 2, 3, 4, 6]);
    // One statistics space: the same row scores the same in each database, so copies rank side by side.
    const scoreOf = new Map<number, Set<number>>();
    for (const r of data.results as Result[]) scoreOf.set(Number(r.primaryKey.id), (scoreOf.get(Number(r.primaryKey.id)) ?? new Set()).add(r.score));
    for (const [id, scores] of scoreOf) expect(scores.size, `row ${id}`).toBe(1);
    const results = data.results as Result[];
    expect(results.slice(0, 3).map((r) => r.primaryKey.id)).toEqual([1, 1, 1]);
    for (const id of scoreOf.keys()) {
      const ranks = results.filter((r) => r.primaryKey.id === id).map((r) => r.rank);
      // Nothing scored differently ranks between the copies of a row.
      const between = results.slice(Math.min(...ranks) - 1, Math.max(...ranks));
      expect(new Set(between.map((r) => r.score)).size, `row ${id}`).toBe(1);
    }
    expect(data.results.map((r: Result) => r.score)).toEqual([...data.results.map((r: Result) => r.score)].sort((a, b) => b - a));
    expect(data.results.map((r: Result) => r.rank)).toEqual(data.results.map((_: unknown, i: number) => i + 1));
    const top = data.results.slice(0, 3);
    const first = top.find((r: Result) => r.databaseId === db.pg);
    expect(first).toMatchObject({
      id: `${db.pg}:${pgTable}:1`, table: pgTable, databaseName: 'Catalog (PostgreSQL)', primaryKey: { id: 1 },
      fields: { id: 1, title: 'Wireless noise cancelling headphones' }, matchedColumns: ['title', 'body'],
      snippet: '<mark>Wireless</mark> noise cancelling <mark>headphones</mark>',
    });
    const wired = (data.results as Result[]).find((r) => r.databaseId === db.my && r.primaryKey.id === 2);
    expect(wired).toMatchObject({ matchedColumns: ['title', 'body'], snippet: 'Wired studio <mark>headphones</mark>' });
  });

  it('when a natural query asks for live results, then every engine answers with its best row first and the answer merges them by rank', async () => {
    const res = await search({ ...catalogs(), query: 'wireless headphones', limit: 20, live: true });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.databases.map((d: { status: string }) => d.status)).toEqual(['ok', 'ok', 'ok']);
    expect(data.databases.map((d: { engine: string }) => d.engine)).toEqual(['postgres', 'mysql', 'sqlite']);
    for (const database of data.databases) expect(database).toMatchObject({ source: 'live', approximate: true, indexedAt: null });
    expect(data.approximate).toBe(true);
    expect(data.liveTables).toEqual([
      { databaseId: db.pg, table: pgTable, reason: 'live_requested' },
      { databaseId: db.my, table: myTable, reason: 'live_requested' },
      { databaseId: db.lite, table: 'products', reason: 'live_requested' },
    ]);
    // The three best rows are row 1 of each engine (reciprocal rank fusion: 1/61 each), ordered by id.
    const top = data.results.slice(0, 3);
    expect(top.map((r: Result) => r.primaryKey.id)).toEqual([1, 1, 1]);
    expect(top.map((r: Result) => r.score)).toEqual([1 / 61, 1 / 61, 1 / 61].map((s) => Math.round(s * 1e8) / 1e8));
    expect(top.map((r: Result) => r.id)).toEqual([...top.map((r: Result) => r.id)].sort());
    expect(data.results.map((r: Result) => r.rank)).toEqual(data.results.map((_: unknown, i: number) => i + 1));
    // Natural mode: any word may match, on every engine; the row holding both ranks first.
    for (const id of [db.pg, db.my, db.lite]) expect(rowIds(data.results, id)).toEqual([1, 2, 3, 4, 6]);
    expect(data.total).toBe(data.databases.reduce((sum: number, d: { matches: number }) => sum + d.matches, 0));
    const first = top.find((r: Result) => r.databaseId === db.pg);
    expect(first).toMatchObject({
      id: `${db.pg}:${pgTable}:1`, table: pgTable, databaseName: 'Catalog (PostgreSQL)', primaryKey: { id: 1 },
      fields: { id: 1, title: 'Wireless noise cancelling headphones' }, matchedColumns: ['title', 'body'],
    });
    for (const result of top) expect(result.snippet).toMatch(/<mark>[Ww]ireless<\/mark>|<mark>headphones<\/mark>/);
    // Both columns match: their headlines are joined by an escaped ellipsis, so the snippet of ASCII text is ASCII.
    expect(first!.snippet).toContain(' &hellip; ');
    expect(first!.snippet).toMatch(/^[\x20-\x7e]*$/);
  });

  it.each([
    ['+battery -wired', (ids: number[]) => ids.includes(1) && ids.includes(3) && !ids.includes(2) && ids.length === 32],
    ['"noise cancelling"', (ids: number[]) => ids.join() === '1,4'],
    ['"cancelling noise"', (ids: number[]) => ids.length === 0],
    ['earbuds OR keyboard', (ids: number[]) => ids.join() === '4,5'],
    ['headphon*', (ids: number[]) => ids.join() === '1,2,6'],
    ['(earbuds OR speaker) +wireless -bass', (ids: number[]) => ids.join() === '4'],
  ])('when the boolean query is %s, then every engine returns the same rows', async (query, check) => {
    const res = await search({ ...catalogs(), query, searchMode: 'boolean', limit: 100 });
    expect(res.status).toBe(200);
    expect(res.body.data.databases.map((d: { status: string }) => d.status)).toEqual(['ok', 'ok', 'ok']);
    for (const id of [db.pg, db.my, db.lite]) {
      const ids = rowIds(res.body.data.results, id);
      expect(check(ids), `${query} on ${id}: ${ids.join()}`).toBe(true);
    }
  });

  it('when a matched row holds HTML, then the snippet escapes it and marks only the match', async () => {
    const res = await search({ ...catalogs(), query: 'tactile switches', limit: 10 });
    expect(res.body.data.results).toHaveLength(3);
    for (const result of res.body.data.results as Result[]) {
      expect(result.snippet).toMatch(/<mark>tactile<\/mark>/);
      expect(result.matchedColumns).toEqual(['body']);
      expect(result.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>"]/);
      expect(result.snippet).toMatch(/&amp;|&lt;RGB&gt;/);
      expect(result.fields.body).toContain('<RGB>');
    }
  });

  it('when a page is read by cursor to the end, then the pages are disjoint, complete and stable', async () => {
    const body = { ...catalogs(), query: 'battery', limit: 7 };
    const seen: string[] = [];
    let cursor: string | null = null;
    let total = 0;
    let pages = 0;
    do {
      const res = await search(cursor ? { ...body, cursor } : body);
      expect(res.status).toBe(200);
      total = res.body.data.total;
      expect(res.body.data.offset).toBe(seen.length);
      seen.push(...res.body.data.results.map((r: Result) => r.id));
      cursor = res.body.data.nextCursor;
      pages += 1;
    } while (cursor && pages < 30);
    expect(total).toBe(3 * (3 + FILLER_ROWS.length)); // "battery" is in rows 1-3 and the fillers, on each engine
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(total);
    // The same window by offset, in one page, is the same order.
    const whole = await search({ ...body, limit: 100 });
    expect(whole.body.data.results.map((r: Result) => r.id)).toEqual(seen);
    const again = await search({ ...body, offset: 14 });
    expect(again.body.data.results.map((r: Result) => r.id)).toEqual(seen.slice(14, 21));
  });
});

describe('searchDatabases: deep pages over tables of different sizes', () => {
  it.each([true, false])('when a deep page needs rows the ranking statement did not detail (live %s), then they are read by key and equal the one-page answer', async (live) => {
    const body = { databases: [db.pg, db.my, db.lite], tables: [pgTable, pgPlain, 'products', 'notes'], query: 'battery', live };
    const whole = await search({ ...body, limit: 100 });
    // The index counts the rows it ranks for the page unless asked for every match.
    const counted = await search({ ...body, limit: 1, exactTotal: true });
    expect(counted.body.data.total).toBe(3 * 34);
    expect(whole.body.data.results).toHaveLength(100);
    for (const offset of [80, 95]) {
      // With 2 rows a page, the ranking statements detail positions near offset / tables only: these rows come later.
      const page = await search({ ...body, offset, limit: 2 });
      expect(page.body.data.results).toEqual(whole.body.data.results.slice(offset, offset + 2));
      for (const result of page.body.data.results as Result[]) expect(result.snippet).toMatch(/<mark>[Bb]attery<\/mark>/);
    }
  });
});

describe('searchDatabases: tables without a full-text index, filters, hostile names', () => {
  it('when a table has no full-text index, then it is still searched by the bounded scan and listed as unindexed', async () => {
    // The PostgreSQL and MariaDB tables share a name: one filter entry selects both.
    const res = await search({ databases: [db.pg, db.my, db.lite], tables: [pgPlain, 'notes'], query: 'battery', live: true });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.results.map((r: Result) => `${r.table}:${r.primaryKey.code}`).sort()).toEqual([`${myPlain}:n1`, `${pgPlain}:n1`, 'notes:n1'].sort());
    expect(data.unindexedTables).toEqual([
      { databaseId: db.pg, table: pgPlain }, { databaseId: db.my, table: myPlain }, { databaseId: db.lite, table: 'notes' },
    ]);
    expect(data.totalIsEstimate).toBe(false);
    for (const result of data.results as Result[]) {
      expect(result.snippet).toContain('<mark>battery</mark>');
      expect(result.matchedColumns).toEqual(['note']);
    }
  });

  it('when LIKE wildcards are searched in an unindexed table, then they are no wildcards', async () => {
    const res = await search({ databases: [db.my], tables: [myPlain], query: '100%', searchMode: 'boolean' });
    expect(res.body.data.results.map((r: Result) => r.primaryKey.code)).toEqual(['n2']);
    for (const query of ['_', '%', '%_%']) {
      const none = await search({ databases: [db.my, db.lite], tables: [myPlain, 'notes'], query });
      expect(none.body.data.results, query).toEqual([]);
    }
  });

  it('when the columns filter names only the title, then matches come from titles and indexes over more columns are not used', async () => {
    const res = await search({ ...catalogs(), query: 'battery', columns: ['title'], limit: 100 });
    expect(res.status).toBe(200);
    const data = res.body.data;
    for (const id of [db.pg, db.my, db.lite]) expect(rowIds(data.results, id)).toEqual(FILLER_ROWS.map((r) => r.id));
    for (const result of data.results as Result[]) expect(result.matchedColumns).toEqual(['title']);
    // PostgreSQL's and MariaDB's indexes cover title and body together; FTS5 filters columns itself.
    expect(data.unindexedTables).toEqual([{ databaseId: db.pg, table: pgTable }, { databaseId: db.my, table: myTable }]);
  });

  it('when table and column names hold quotes, backticks and spaces, then they are searched like any other', async () => {
    const res = await search({ databases: [db.pg, db.my, db.lite], tables: [pgWeird, 'we"ird ta`ble\'s'], query: 'earbuds', searchMode: 'boolean' });
    expect(res.status).toBe(200);
    expect(res.body.data.databases.map((d: { status: string }) => d.status)).toEqual(['ok', 'ok', 'ok']);
    expect(res.body.data.results).toHaveLength(3);
    const pg = res.body.data.results.find((r: Result) => r.databaseId === db.pg);
    expect(pg).toMatchObject({ table: pgWeird, id: `${db.pg}:${pgWeird}:4`, fields: { [weirdColumn]: 'Noise cancelling earbuds' } });
    expect(res.body.data.unindexedTables).toEqual([]);
  });
});

describe('searchDatabases: hostile queries', () => {
  const hostile = [
    "'; DROP TABLE products; --", '" OR 1=1 --', 'foo\\', '\\\\" \\\'', 'battery:*', 'a <-> b', '!battery', '& | ! ( )',
    '"unbalanced phrase', '((((battery', 'battery))))', '+ - + -', 'OR OR AND NOT', '`battery`', '%_%', '{title}: battery',
    'NEAR(battery pack)', '*', 'battery*:*', '日本語 über', '\u0000battery', 'x'.repeat(500), 'battery '.repeat(62),
    '( '.repeat(120) + 'battery',
  ];
  it.each(['natural', 'boolean'])('when the %s query is hostile, then the answer is never a server error and no database fails', async (searchMode) => {
    for (const query of hostile) {
      const res = await search({ ...catalogs(), query, searchMode });
      expect(res.status, `${searchMode} ${JSON.stringify(query)}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.databases.map((d: { status: string }) => d.status), query).toEqual(['ok', 'ok', 'ok']);
    }
  });

  it('when a boolean query only excludes, then 400 saying a word is needed', async () => {
    const res = await search({ ...catalogs(), query: '-battery -cable', searchMode: 'boolean' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.errors[0].path).toBe('/query');
  });

  it('when the query has no words at all, then the answer is empty, not an error', async () => {
    const res = await search({ ...catalogs(), query: ':* <-> !' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ results: [], total: 0, hasMore: false, nextCursor: null });
  });
});

describe('searchDatabases: a hanging and a broken database', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('when one database accepts connections and never answers and another is gone, then the others still answer', async () => {
    const create = async (name: string) => (await t.client.post('/api/v1/databases', postgresConnection({ name, tables: [pgTable] }), { token: owner.token })).body.data.database.id as string;
    const hanging = await create('Hanging');
    const broken = await create('Broken');
    // Saved as working, then pointed at a server that never answers and at a database that does not exist.
    await databaseConnectionRepository.update(hanging, { port: (silent.address() as { port: number }).port });
    await databaseConnectionRepository.update(broken, { database: `missing_${suffix}` });
    const started = Date.now();
    // Live: the index would answer without contacting the databases (the two new connections may be synced already).
    const res = await search({ databases: [db.my, hanging, broken, db.lite], tables: [pgTable, 'products'], query: 'earbuds', live: true });
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    const statuses = Object.fromEntries(res.body.data.databases.map((d: { databaseId: string }) => [d.databaseId, d]));
    expect(statuses[hanging]).toMatchObject({ status: 'timeout', matches: 0, error: { code: 'DATABASE_TIMEOUT' } });
    expect(statuses[broken]).toMatchObject({ status: 'error', matches: 0, error: { code: 'DATABASE_NOT_FOUND' } });
    expect(statuses[db.my]).toMatchObject({ status: 'ok', matches: 1, error: null });
    expect(statuses[db.lite]).toMatchObject({ status: 'ok', matches: 1, error: null });
    expect(res.body.data.results.map((r: Result) => r.databaseId).sort()).toEqual([db.my, db.lite].sort());
    expect(statuses[hanging].tookMs).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(4000); // SEARCH_TIMEOUT_MS is 2000 in this file
    await t.server.services.searchRecorder.flush();
    const recorded = await searchRecordRepository.page(owner.id, 50, 0);
    expect(recorded.rows.find((r) => r.query === 'earbuds' && r.databases.includes(hanging))).toMatchObject({ status: 'partial', resultCount: 2 });
    await t.client.delete(`/api/v1/databases/${hanging}`, { token: owner.token });
    await t.client.delete(`/api/v1/databases/${broken}`, { token: owner.token });
  });
});

describe('searchDatabases: whose databases', () => {
  it("when another user's database is named, then 404 exactly like an unknown id", async () => {
    const other = await registerUser(t.client);
    const otherDb = (await t.client.post('/api/v1/databases', postgresConnection({ tables: [pgTable] }), { token: other.token })).body.data.database.id;
    const foreign = await search({ databases: [otherDb], query: 'battery' });
    const unknown = await search({ databases: ['db_doesnotexist000000000'], query: 'battery' });
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body.error.code).toBe(unknown.body.error.code);
  });

  it('when a database of the other environment is named, then 401 KEY_ENVIRONMENT_MISMATCH; when none is named, then only this environment is searched', async () => {
    const live = (await t.client.post('/api/v1/databases', { name: 'Live SQLite', engine: 'sqlite', database: liteFile, environment: 'live' }, { token: owner.token })).body.data.database.id;
    const res = await search({ databases: [db.lite, live], query: 'battery' });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'KEY_ENVIRONMENT_MISMATCH', details: { databaseId: live } });
    const all = await search({ query: 'earbuds', tables: [pgTable, 'products'] });
    expect(all.status).toBe(200);
    expect(all.body.data.databases.map((d: { databaseId: string }) => d.databaseId)).not.toContain(live);
    expect(all.body.data.databases.map((d: { databaseId: string }) => d.databaseId)).toEqual(expect.arrayContaining([db.pg, db.my, db.lite]));
    const liveKey = await createKey(t.client, owner, { rateLimitTier: 'enterprise', environment: 'live' });
    const fromLive = await search({ query: 'earbuds' }, liveKey.secret);
    expect(fromLive.body.data.databases.map((d: { databaseId: string }) => d.databaseId)).toEqual([live]);
  });
});

describe('searchDatabases: bounds, cursors, modes', () => {
  it.each([
    [{ query: 'x'.repeat(501) }, '/query'],
    [{ query: 'battery', limit: 101 }, '/limit'],
    [{ query: 'battery', offset: 1001 }, '/offset'],
    [{ query: 'battery', offset: 1000, limit: 101 }, '/limit'],
    [{ query: 'battery', offset: 1050 - 50, limit: 100 }, null],
    [{ query: 'battery', offset: 999, limit: 102 }, '/limit'],
    [{ query: 'battery', offset: 1000, limit: 100 }, null],
    [{ query: 'battery', offset: 1001 - 2, limit: 100 + 2 }, '/limit'],
    [{ query: '   ' }, '/query'],
  ])('when the request is %j, then the bounds answer', async (body, path) => {
    const res = await search({ ...catalogs(), ...body });
    if (path === null) {
      expect(res.status).toBe(200);
      return;
    }
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body.error.details)).toContain(path);
  });

  it('when offset + limit passes 1100 within the field bounds, then 400 naming offset', async () => {
    const res = await search({ ...catalogs(), query: 'battery', offset: 1000, limit: 100 });
    expect(res.status).toBe(200);
    const over = await search({ ...catalogs(), query: 'battery', offset: 1001, limit: 99 });
    expect(over.status).toBe(400);
  });

  it('when a cursor is changed or used for another query, then 400 naming cursor', async () => {
    const first = await search({ ...catalogs(), query: 'battery', limit: 5 });
    const cursor: string = first.body.data.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const [payload, signature] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ v: 1, o: 0, f: JSON.parse(Buffer.from(payload, 'base64url').toString()).f })).toString('base64url');
    // Change the signature's last character to a different one (a fixed 'A' would equal the real one 1 time in 64).
    const lastChar = signature.endsWith('A') ? 'B' : 'A';
    const tampered = `${payload}.${signature.slice(0, -1)}${lastChar}`;
    for (const bad of [`${forged}.${signature}`, tampered, 'garbage', `${payload}.`]) {
      const res = await search({ ...catalogs(), query: 'battery', limit: 5, cursor: bad });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.details.errors[0].path).toBe('/cursor');
    }
    const otherQuery = await search({ ...catalogs(), query: 'cable', limit: 5, cursor });
    expect(otherQuery.status).toBe(400);
    const good = await search({ ...catalogs(), query: 'battery', limit: 5, cursor });
    expect(good.body.data.offset).toBe(5);
  });

  it.each(['semantic', 'hybrid'])('when searchMode is %s and nothing is semantically indexed, then semantic is 409 and hybrid falls back to full text', async (searchMode) => {
    const res = await search({ ...catalogs(), query: 'battery', searchMode });
    if (searchMode === 'semantic') {
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('SEMANTIC_INDEX_REQUIRED');
      expect(res.body.error.details.notIndexed.length).toBeGreaterThan(0);
    } else {
      expect(res.status).toBe(200);
      expect(res.body.data.total).toBeGreaterThan(0);
      expect(res.body.data.semanticUnindexedTables.length).toBeGreaterThan(0);
    }
  });
});

describe('searchDatabases: cache and records', () => {
  it('when the same search repeats, then it is answered from the cache until its connection changes', async () => {
    const table = `cached_${suffix}`;
    await onMysql([`CREATE TABLE ${table} (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY ft (body)) ENGINE=InnoDB`, `INSERT INTO ${table} VALUES (1, 'zebra crossing')`]);
    try {
      const id = (await t.client.post('/api/v1/databases', mysqlConnection({ name: 'Cache test', tables: [table] }), { token: owner.token })).body.data.database.id;
      // Live: the connection's first sync runs meanwhile, and this test is about the result cache.
      const first = await search({ databases: [id], query: 'zebra', live: true });
      expect(first.body.data.total).toBe(1);
      await onMysql([`INSERT INTO ${table} VALUES (2, 'zebra stripes')`]);
      const cached = await search({ databases: [id], query: 'zebra', live: true });
      expect(cached.body.data.total).toBe(1);
      expect(cached.body.data.results).toEqual(first.body.data.results);
      const renamed = await t.client.put(`/api/v1/databases/${id}`, { name: 'Cache test, renamed' }, { token: owner.token });
      expect(renamed.status).toBe(200);
      const fresh = await search({ databases: [id], query: 'zebra', live: true });
      expect(fresh.body.data.total).toBe(2);
      expect(fresh.body.data.results[0].databaseName).toBe('Cache test, renamed');
    } finally {
      await onMysql([`DROP TABLE IF EXISTS ${table}`]);
    }
  });

  it('when a search runs, then it is recorded with its key, databases, mode, count, time and unindexed tables', async () => {
    const res = await search({ databases: [db.pg], tables: [pgPlain], query: 'order more', searchMode: 'boolean' });
    await t.server.services.searchRecorder.flush();
    const { rows } = await searchRecordRepository.page(owner.id, 50, 0);
    expect(rows.find((r) => r.query === 'order more')).toMatchObject({
      keyId: key.id, searchMode: 'boolean', databases: [db.pg], tables: [pgPlain], resultCount: 1, status: 'ok',
      unindexedTables: [{ databaseId: db.pg, table: pgPlain }], responseTimeMs: expect.any(Number),
    });
  });
});
