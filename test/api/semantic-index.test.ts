/**
 * The deprecated semantic-index operations (startSemanticIndex, getSemanticIndexStatus, cancelSemanticIndex) over
 * Quarry's search index, end to end: a SQLite file and a PostgreSQL table connected through the API (their
 * text is synced into the index at once), semantic search turned on with startSemanticIndex and followed with
 * getSemanticIndexStatus until done, then searched through POST /api/v1/search. Every paraphrased query shares no
 * word with its row (native full-text search finds nothing), and the row still ranks first. Every answer of these
 * operations says it is deprecated and links to its successor.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiResponse } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex, waitForTable } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onPostgres, onSqlite, postgresConnection, userPostgresUrl } from '../support/seed-databases.js';
import { ftsOr, paraphrases, semanticRows, tsOr } from '../support/semantic-corpus.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const pgTable = `tips_${suffix}`;
const sqliteFile = `semantic-${suffix}.db`;

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let sqliteDb: { id: string };
let pgDb: { id: string };
let sqlitePath: string;

const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;
const values = semanticRows.map((row) => `(${row.id}, ${sqlString(row.title)}, ${sqlString(row.body)})`).join(', ');
const as = (user: TestUser = owner) => ({ token: user.token });
const indexPath = (db: { id: string }, table?: string) =>
  `/api/v1/databases/${db.id}/semantic-index${table === undefined ? '' : `?table=${encodeURIComponent(table)}`}`;
const search = (body: Record<string, unknown>) => t.client.post('/api/v1/search', body, { token: key.secret });
type Result = { rank: number; score: number; primaryKey: { id: number }; table: string; databaseId: string };

async function sqliteAll(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const db = new sqlite3.Database(sqlitePath, sqlite3.OPEN_READONLY);
  try {
    return await new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as Record<string, unknown>[]))));
  } finally {
    db.close();
  }
}

async function pgAll(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: userPostgresUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A successful answer of a deprecated operation names the date it was deprecated and its successor. */
function expectDeprecated(res: ApiResponse, db: { id: string }, table: string): void {
  expect(res.headers.get('deprecation')).toBe('@1795564800');
  expect(res.headers.get('link')).toBe(`</api/v1/databases/${db.id}/index/tables/${encodeURIComponent(table)}>; rel="successor-version"`);
}

/** Polls getSemanticIndexStatus until the job has ended; every answer is checked against the contract. */
async function waitForEnd(db: { id: string }, table: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await t.client.get(indexPath(db, table), as());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectDeprecated(res, db, table);
    if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`index of ${table} did not end: ${JSON.stringify(res.body.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startAndWait(db: { id: string }, table: string) {
  const started = await t.client.post(indexPath(db), { table }, as());
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expectDeprecated(started, db, table);
  expect(started.body.data).toMatchObject({ table, status: 'queued', rowsDone: 0 });
  return waitForEnd(db, table);
}

/** Indexing runs the real model: generous per-test time, as CPU is shared with the other test files. */
const SLOW = 120_000;

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  sqlitePath = await onSqlite(join(t.dataDir, 'sqlite', owner.id), sqliteFile, [
    'CREATE TABLE tips (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)',
    `INSERT INTO tips (id, title, body) VALUES ${values}`,
    "CREATE VIRTUAL TABLE tips_fts USING fts5(title, body, content='tips', content_rowid='id')",
    "INSERT INTO tips_fts(tips_fts) VALUES ('rebuild')",
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT)',
    "INSERT INTO notes (note) VALUES ('an unindexed note')",
    'CREATE TABLE keyless (note TEXT)',
    'CREATE TABLE bulk (id INTEGER PRIMARY KEY, text TEXT)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) INSERT INTO bulk SELECT i, 'row number ' || i || ' about gardening and weather' FROM n`,
  ]);
  await onPostgres([
    `CREATE TABLE ${pgTable} (id int PRIMARY KEY, title text NOT NULL, body text)`,
    `INSERT INTO ${pgTable} (id, title, body) VALUES ${values}`,
    `CREATE INDEX ${pgTable}_fts ON ${pgTable} USING GIN (to_tsvector('english', title || ' ' || coalesce(body, '')))`,
  ]);
  sqliteDb = (await t.client.post('/api/v1/databases', { name: 'Tips (SQLite)', engine: 'sqlite', database: sqliteFile, environment: 'test' }, as())).body.data.database;
  pgDb = (await t.client.post('/api/v1/databases', postgresConnection({ name: 'Tips (PostgreSQL)', tables: [pgTable] }), as())).body.data.database;
  // Connecting synced every table's text; semantic search starts from that quiet index.
  await waitForIndex(t.client, owner.token, sqliteDb.id);
  await waitForIndex(t.client, owner.token, pgDb.id);
}, SLOW);
afterEach(() => t.assertContract());
afterAll(async () => {
  await onPostgres([`DROP TABLE IF EXISTS ${pgTable}`]).catch(() => undefined);
  await t?.stop();
});

describe('native full-text search on the paraphrases', () => {
  it('when each paraphrase is run as an OR of its words through FTS5 and PostgreSQL full text, then no row matches', async () => {
    for (const { query } of paraphrases) {
      expect(await sqliteAll('SELECT rowid FROM tips_fts WHERE tips_fts MATCH ?', [ftsOr(query)]), query).toEqual([]);
      const matches = await pgAll(`SELECT id FROM ${pgTable} WHERE to_tsvector('english', title || ' ' || coalesce(body, '')) @@ to_tsquery('english', $1)`, [tsOr(query)]);
      expect(matches, query).toEqual([]);
    }
  });
});

describe.each([
  // The PostgreSQL table holds the same texts as the SQLite one, whose vectors it reuses: nothing is embedded twice.
  { engine: 'SQLite', db: () => sqliteDb, table: () => 'tips', embedded: 16 },
  { engine: 'PostgreSQL', db: () => pgDb, table: () => pgTable, embedded: 0 },
])('startSemanticIndex on a $engine table', ({ db, table, embedded }) => {
  it('when started and watched, then semantic search is on for the table and the sync ends done with every row given a vector, a rate and no time left', async () => {
    // Before: the text sync that connecting ran, not searchable by meaning.
    const before = await t.client.get(indexPath(db(), table()), as());
    expect(before.body.data).toMatchObject({ status: 'done', rowsDone: 16, rowsEmbedded: 0, searchable: false });
    const done = await startAndWait(db(), table());
    expect(done).toMatchObject({
      status: 'done', rowsDone: 16, rowsTotal: 16, rowsEmbedded: embedded, rowsSkipped: 0, rowsDeleted: 0,
      rowLimit: 100_000, truncated: false, searchable: true, etaSeconds: 0, error: null,
      providerId: 'local:universal-sentence-encoder-lite@0.2.0',
    });
    expect(done.ratePerSecond).toBeGreaterThan(0);
    // The successor operation tells the same story.
    const successor = await t.client.get(`/api/v1/databases/${db().id}/index/tables/${encodeURIComponent(table())}`, as());
    expect(successor.body.data).toMatchObject({ table: table(), state: 'ready', semantic: true, semanticReady: true, rows: 16, job: { jobId: done.jobId, semantic: true } });
    expect(successor.headers.get('deprecation')).toBeNull();
  }, SLOW);

  it.each(paraphrases)('when searching "$query" by meaning, then row $id ranks first', async ({ query, id }) => {
    const res = await search({ databases: [db().id], tables: [table()], query, searchMode: 'semantic', limit: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [first, second] = res.body.data.results as Result[];
    expect(res.body.data.semanticUnindexedTables).toEqual([]);
    expect(first).toMatchObject({ databaseId: db().id, table: table(), primaryKey: { id }, rank: 1 });
    expect(first!.score).toBeGreaterThan(second?.score ?? -1);
  }, SLOW);
});

describe('searching by meaning', () => {
  it('when a semantic search embeds its query, then it counts one AI request; over no table searched by meaning it counts none and is 409', async () => {
    const admit = vi.spyOn(t.server.services.limits, 'admitAiRequest');
    try {
      const res = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'insomnia remedies', searchMode: 'semantic' });
      expect(res.status).toBe(200);
      expect(admit).toHaveBeenCalledTimes(1);
      const none = await search({ databases: [sqliteDb.id], tables: ['notes'], query: 'insomnia remedies', searchMode: 'semantic' });
      expect(admit).toHaveBeenCalledTimes(1);
      expect(none.status).toBe(409);
      expect(none.body.error).toMatchObject({
        code: 'SEMANTIC_INDEX_REQUIRED',
        message: expect.stringContaining('notes'),
        details: { notIndexed: [{ databaseId: sqliteDb.id, table: 'notes', reason: 'never_indexed', message: expect.stringContaining(`PATCH /api/v1/databases/${sqliteDb.id}/index/tables/notes`) }] },
      });
    } finally {
      admit.mockRestore();
    }
  });

  it('when the window moves with offset, then ranks continue, scores never rise and every match is counted', async () => {
    const body = { databases: [sqliteDb.id], tables: ['tips'], query: 'kitchen and cooking', searchMode: 'semantic', limit: 3 };
    const first = await search(body);
    const second = await search({ ...body, offset: 3 });
    expect(first.body.data.results.map((hit: Result) => hit.rank)).toEqual([1, 2, 3]);
    expect(second.body.data.results.map((hit: Result) => hit.rank)).toEqual([4, 5, 6]);
    expect(second.body.data.results[0].score).toBeLessThanOrEqual(first.body.data.results[2].score);
    expect(first.body.data.total).toBeGreaterThanOrEqual(6);
    expect(first.body.data.total).toBeLessThanOrEqual(16);
    expect(first.body.data.databases).toEqual([expect.objectContaining({ databaseId: sqliteDb.id, source: 'index', matches: first.body.data.total, indexedAt: expect.any(String) })]);
  });
});

describe('incremental re-sync', () => {
  it('when nothing changed, then every row is skipped; after an edit and a delete, one row is embedded and one dropped', async () => {
    const again = await startAndWait(sqliteDb, 'tips');
    expect(again).toMatchObject({ status: 'done', rowsDone: 16, rowsEmbedded: 0, rowsSkipped: 16, rowsDeleted: 0, searchable: true });

    await onSqlite(join(t.dataDir, 'sqlite', owner.id), sqliteFile, [
      "UPDATE tips SET title = 'Sourdough starter', body = 'Feed the culture flour and water daily and keep it warm.' WHERE id = 16",
      'DELETE FROM tips WHERE id = 15',
    ]);
    const sync = await t.client.post(`/api/v1/databases/${sqliteDb.id}/index/sync`, { tables: ['tips'] }, as());
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    expect(sync.body.data.jobs).toEqual([expect.objectContaining({ table: 'tips', status: 'queued', trigger: 'manual', semantic: true })]);
    const synced = await waitForTable(t.client, owner.token, sqliteDb.id, 'tips', true);
    expect(synced.job).toMatchObject({ status: 'done', rowsDone: 15, rowsWritten: 1, rowsEmbedded: 1, rowsSkipped: 14, rowsDeleted: 1 });

    const bread = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'sourdough bread', searchMode: 'semantic' });
    expect(bread.body.data.results[0].primaryKey).toEqual({ id: 16 });
    const paris = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'sightseeing holidays france', searchMode: 'semantic', limit: 20 });
    expect(paris.body.data.results.map((hit: Result) => hit.primaryKey.id)).not.toContain(15);
    // The text index moved with it.
    const words = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'sourdough louvre' });
    expect(words.body.data.results.map((hit: Result) => hit.primaryKey.id)).toEqual([16]);
  }, SLOW);
});

describe('startSemanticIndex, getSemanticIndexStatus and cancelSemanticIndex', () => {
  it('when a job is cancelled, then it ends cancelled, cancelling again is 409 and a new start is accepted and resumes', async () => {
    const started = await t.client.post(indexPath(sqliteDb), { table: 'bulk' }, as());
    expect(started.status).toBe(202);
    const repeat = await t.client.post(indexPath(sqliteDb), { table: 'bulk' }, as());
    expect(repeat.status).toBe(200);
    expectDeprecated(repeat, sqliteDb, 'bulk');
    expect(repeat.body.data.jobId).toBe(started.body.data.jobId);

    const cancelled = await t.client.delete(indexPath(sqliteDb, 'bulk'), as());
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expectDeprecated(cancelled, sqliteDb, 'bulk');
    expect(cancelled.body.data).toMatchObject({ jobId: started.body.data.jobId, status: 'cancelled', searchable: false });
    await t.server.services.searchIndex.runner.idle();
    const status = await t.client.get(indexPath(sqliteDb, 'bulk'), as());
    expect(status.body.data).toMatchObject({ status: 'cancelled', searchable: false });
    expect(status.body.data.rowsDone).toBeLessThan(600);

    const twice = await t.client.delete(indexPath(sqliteDb, 'bulk'), as());
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ code: 'CONFLICT', details: { status: 'cancelled' } });

    const done = await startAndWait(sqliteDb, 'bulk');
    expect(done).toMatchObject({ status: 'done', rowsDone: 600, rowsTotal: 600, searchable: true });
    expect(done.rowsEmbedded + done.rowsSkipped).toBe(600);
  }, SLOW);

  it('when a table was only synced for text, then its status is that sync, not searchable by meaning; cancelling it is 409', async () => {
    const status = await t.client.get(indexPath(sqliteDb, 'notes'), as());
    expect(status.status).toBe(200);
    expect(status.body.data).toMatchObject({ table: 'notes', status: 'done', rowsDone: 1, rowsEmbedded: 0, searchable: false });
    const cancel = await t.client.delete(indexPath(sqliteDb, 'notes'), as());
    expect(cancel.status).toBe(409);
    expect(cancel.body.error).toMatchObject({ code: 'CONFLICT', details: { status: 'done' } });
  });

  it('when the table is unknown, has no primary key or was never synced, then 404, 400 and 404', async () => {
    const unknown = await t.client.post(indexPath(sqliteDb), { table: 'missing' }, as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ resource: 'table', id: 'missing' });
    const keyless = await t.client.post(indexPath(sqliteDb), { table: 'keyless' }, as());
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.details.errors[0]).toMatchObject({ path: '/table', message: expect.stringContaining('primary key') });
    const never = await t.client.get(indexPath(sqliteDb, 'keyless'), as());
    expect(never.status).toBe(404);
    expect(never.body.error.details).toMatchObject({ resource: 'semanticIndex', id: 'keyless' });
    const neverCancel = await t.client.delete(indexPath(sqliteDb, 'keyless'), as());
    expect(neverCancel.status).toBe(404);
    const noTable = await t.client.get(indexPath(sqliteDb), as());
    expect(noTable.status).toBe(400);
    expect(noTable.body.error.code).toBe('VALIDATION_ERROR');
    // Nothing was turned on by the refused requests.
    const keylessIndex = await t.client.get(`/api/v1/databases/${sqliteDb.id}/index/tables/keyless`, as());
    expect(keylessIndex.body.data).toMatchObject({ state: 'not_indexed', semantic: false });
  });

  it('when another user names the connection, then every semantic index operation is the same 404 as an unknown id', async () => {
    const intruder = await registerUser(t.client);
    const answers = await Promise.all([
      t.client.post(indexPath(sqliteDb), { table: 'tips' }, as(intruder)),
      t.client.get(indexPath(sqliteDb, 'tips'), as(intruder)),
      t.client.delete(indexPath(sqliteDb, 'tips'), as(intruder)),
      t.client.get(indexPath({ id: 'db_unknown' }, 'tips'), as()),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('when no JWT is sent, then 401', async () => {
    const res = await t.client.get(indexPath(sqliteDb, 'tips'));
    expect(res.status).toBe(401);
  });
});
