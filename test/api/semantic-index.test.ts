/**
 * Semantic search (issue 7) end to end: a SQLite file and a PostgreSQL table connected through the API, indexed with
 * startSemanticIndex, watched with getSemanticIndexStatus until done, then searched through the engine the search
 * service calls. Every paraphrased query shares no word with its row (native full-text search finds nothing), and
 * the row still ranks first.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiKeyRepository } from '../../src/repositories/api-key-repository.js';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { userRepository } from '../../src/repositories/user-repository.js';
import type { KeyCaller } from '../../src/services/callers.js';
import { semanticIndexRequired } from '../../src/semantic/index.js';
import { createKey, registerUser, type TestUser } from '../support/factories.js';
import { onPostgres, onSqlite, postgresConnection, userPostgresUrl } from '../support/seed-databases.js';
import { ftsOr, paraphrases, semanticRows, tsOr } from '../support/semantic-corpus.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const pgTable = `tips_${suffix}`;
const sqliteFile = `semantic-${suffix}.db`;

let t: TestServer;
let owner: TestUser;
let caller: KeyCaller;
let sqliteDb: { id: string };
let pgDb: { id: string };
let sqlitePath: string;

const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;
const values = semanticRows.map((row) => `(${row.id}, ${sqlString(row.title)}, ${sqlString(row.body)})`).join(', ');
const as = (user: TestUser = owner) => ({ token: user.token });
const indexPath = (db: { id: string }, table?: string) =>
  `/api/v1/databases/${db.id}/semantic-index${table === undefined ? '' : `?table=${encodeURIComponent(table)}`}`;

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

/** Polls getSemanticIndexStatus until the job has ended; every answer is checked against the contract. */
async function waitForEnd(db: { id: string }, table: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await t.client.get(indexPath(db, table), as());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`index of ${table} did not end: ${JSON.stringify(res.body.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function indexAndWait(db: { id: string }, table: string) {
  const started = await t.client.post(indexPath(db), { table }, as());
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body.data).toMatchObject({ table, status: 'queued', rowsDone: 0 });
  return waitForEnd(db, table);
}

/** Indexing runs the real model: generous per-test time, as CPU is shared with the other test files. */
const SLOW = 120_000;

const search = (db: { id: string }, query: string, extra: Record<string, unknown> = {}) =>
  databaseConnectionRepository.findById(db.id).then((record) =>
    t.server.services.semantic.search({ caller, connections: [record!], query, limit: 5, ...extra }),
  );

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  const key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  caller = { kind: 'key', key: (await apiKeyRepository.findOwned(owner.id, key.id))!, user: (await userRepository.findById(owner.id))! };
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
}, 120_000);
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
  { engine: 'SQLite', db: () => sqliteDb, table: () => 'tips' },
  { engine: 'PostgreSQL', db: () => pgDb, table: () => pgTable },
])('semantic index of a $engine table', ({ db, table }) => {
  it('when started and watched, then it ends done with every row embedded, a rate and no time left', async () => {
    const done = await indexAndWait(db(), table());
    expect(done).toMatchObject({
      status: 'done', rowsDone: 16, rowsTotal: 16, rowsEmbedded: 16, rowsSkipped: 0, rowsDeleted: 0,
      rowLimit: 100_000, truncated: false, searchable: true, etaSeconds: 0, error: null,
      providerId: 'local:universal-sentence-encoder-lite@0.2.0',
    });
    expect(done.ratePerSecond).toBeGreaterThan(0);
  }, SLOW);

  it.each(paraphrases)('when searching "$query", then row $id ranks first', async ({ query, id }) => {
    const result = await search(db(), query);
    expect(result.notIndexed.filter((n) => n.table === table())).toEqual([]);
    expect(result.hits[0]).toMatchObject({ databaseId: db().id, table: table(), primaryKey: { id }, rank: 1 });
    expect(result.hits[0].score).toBeGreaterThan(result.hits[1]?.score ?? -1);
  }, SLOW);
});

describe('searching', () => {
  it('when a semantic search embeds its query, then it counts one AI request; over no indexed table it counts none', async () => {
    const admit = vi.spyOn(t.server.services.limits, 'admitAiRequest');
    try {
      await search(sqliteDb, 'insomnia remedies', { tables: ['tips'] });
      expect(admit).toHaveBeenCalledTimes(1);
      expect(admit).toHaveBeenCalledWith(caller);
      const none = await search(sqliteDb, 'insomnia remedies', { tables: ['notes'] });
      expect(admit).toHaveBeenCalledTimes(1);
      expect(none.hits).toEqual([]);
      expect(none.notIndexed).toEqual([{ databaseId: sqliteDb.id, table: 'notes', reason: 'never_indexed', message: expect.stringContaining('semantic-index') }]);
      const error = semanticIndexRequired(none.notIndexed);
      expect(error).toMatchObject({ code: 'SEMANTIC_INDEX_REQUIRED', status: 409, details: { notIndexed: none.notIndexed } });
      expect(error.message).toContain('notes');
    } finally {
      admit.mockRestore();
    }
  });

  it('when the window moves with offset, then ranks continue and total counts every match', async () => {
    const first = await search(sqliteDb, 'kitchen and cooking', { tables: ['tips'], limit: 3, minScore: -1 });
    const second = await search(sqliteDb, 'kitchen and cooking', { tables: ['tips'], limit: 3, offset: 3, minScore: -1 });
    expect(first.total).toBe(16);
    expect(first.hits.map((hit) => hit.rank)).toEqual([1, 2, 3]);
    expect(second.hits.map((hit) => hit.rank)).toEqual([4, 5, 6]);
    expect(second.hits[0].score).toBeLessThanOrEqual(first.hits[2].score);
    expect(first.searchedTables).toEqual([{ databaseId: sqliteDb.id, table: 'tips', rows: 16 }]);
  });
});

describe('incremental re-indexing', () => {
  it('when nothing changed, then every row is skipped; after an edit and a delete, one row is embedded and one dropped', async () => {
    const again = await indexAndWait(sqliteDb, 'tips');
    expect(again).toMatchObject({ status: 'done', rowsDone: 16, rowsEmbedded: 0, rowsSkipped: 16, rowsDeleted: 0 });

    await onSqlite(join(t.dataDir, 'sqlite', owner.id), sqliteFile, [
      "UPDATE tips SET title = 'Sourdough starter', body = 'Feed the culture flour and water daily and keep it warm.' WHERE id = 16",
      'DELETE FROM tips WHERE id = 15',
    ]);
    const changed = await indexAndWait(sqliteDb, 'tips');
    expect(changed).toMatchObject({ status: 'done', rowsDone: 15, rowsEmbedded: 1, rowsSkipped: 14, rowsDeleted: 1 });

    const bread = await search(sqliteDb, 'sourdough bread', { tables: ['tips'] });
    expect(bread.hits[0].primaryKey).toEqual({ id: 16 });
    const paris = await search(sqliteDb, 'sightseeing holidays france', { tables: ['tips'], minScore: -1, limit: 20 });
    expect(paris.hits.map((hit) => hit.primaryKey.id)).not.toContain(15);
  }, SLOW);
});

describe('startSemanticIndex, getSemanticIndexStatus and cancelSemanticIndex', () => {
  it('when a job is cancelled, then it ends cancelled, cancelling again is 409 and a new start is accepted', async () => {
    const started = await t.client.post(indexPath(sqliteDb), { table: 'bulk' }, as());
    expect(started.status).toBe(202);
    const repeat = await t.client.post(indexPath(sqliteDb), { table: 'bulk' }, as());
    expect(repeat.status).toBe(200);
    expect(repeat.body.data.jobId).toBe(started.body.data.jobId);

    const cancelled = await t.client.delete(indexPath(sqliteDb, 'bulk'), as());
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data).toMatchObject({ jobId: started.body.data.jobId, status: 'cancelled', searchable: false });
    await t.server.services.semantic.runner.idle();
    const status = await t.client.get(indexPath(sqliteDb, 'bulk'), as());
    expect(status.body.data.status).toBe('cancelled');
    expect(status.body.data.rowsDone).toBeLessThan(600);

    const twice = await t.client.delete(indexPath(sqliteDb, 'bulk'), as());
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ code: 'CONFLICT', details: { status: 'cancelled' } });

    const done = await indexAndWait(sqliteDb, 'bulk');
    expect(done).toMatchObject({ status: 'done', rowsDone: 600, rowsTotal: 600 });
    expect(done.rowsEmbedded + done.rowsSkipped).toBe(600);
  }, SLOW);

  it('when the table is unknown, has no primary key or was never indexed, then 404, 400 and 404', async () => {
    const unknown = await t.client.post(indexPath(sqliteDb), { table: 'missing' }, as());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ resource: 'table', id: 'missing' });
    const keyless = await t.client.post(indexPath(sqliteDb), { table: 'keyless' }, as());
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.details.errors[0]).toMatchObject({ path: '/table', message: expect.stringContaining('primary key') });
    const never = await t.client.get(indexPath(sqliteDb, 'notes'), as());
    expect(never.status).toBe(404);
    expect(never.body.error.details).toMatchObject({ resource: 'semanticIndex' });
    const noTable = await t.client.get(indexPath(sqliteDb), as());
    expect(noTable.status).toBe(400);
    expect(noTable.body.error.code).toBe('VALIDATION_ERROR');
  });

  it("when another user names the connection, then every semantic index operation is the same 404 as an unknown id", async () => {
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
