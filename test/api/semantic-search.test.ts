/**
 * searchDatabases in searchMode semantic and hybrid, end to end through the API: the paraphrase
 * corpus in a SQLite file (FTS5) and a PostgreSQL table (GIN), synced into Quarry's index when connected, semantic
 * search turned on per table with updateIndexedTable and followed until `semanticReady`, then searched with POST
 * /api/v1/search. Every paraphrased query shares no word with its row, so natural mode (BM25 over the index) cannot
 * find it, while semantic and hybrid rank it first.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex, waitForTable } from '../support/indexing.js';
import { onPostgres, onSqlite, postgresConnection } from '../support/seed-databases.js';
import { paraphrases, semanticRows } from '../support/semantic-corpus.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const pgTable = `tips_${suffix}`;
const sqliteFile = `semantic-search-${suffix}.db`;

let t: TestServer;
let owner: TestUser;
let key: TestKey;
let sqliteDb: { id: string };
let pgDb: { id: string };
/** The server's clock runs this far ahead of the real one (the AI limit test moves it). */
let clockOffsetMs = 0;

const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;
const values = semanticRows.map((row) => `(${row.id}, ${sqlString(row.title)}, ${sqlString(row.body)})`).join(', ');
const search = (body: Record<string, unknown>, secret = key.secret) => t.client.post('/api/v1/search', body, { token: secret });
const turnOnHint = (db: { id: string }, table: string) => `PATCH /api/v1/databases/${db.id}/index/tables/${encodeURIComponent(table)} with {"semantic": true}`;

/** Turns semantic search on for a table (updateIndexedTable) and follows getIndexedTable until it is searched by meaning. */
async function turnSemanticOn(db: { id: string }, table: string) {
  const res = await t.client.patch(`/api/v1/databases/${db.id}/index/tables/${encodeURIComponent(table)}`, { semantic: true }, { token: owner.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data).toMatchObject({ table, semantic: true, semanticReady: false, job: { semantic: true, trigger: 'settings' } });
  expect(['queued', 'running']).toContain(res.body.data.job.status);
  const ready = await waitForTable(t.client, owner.token, db.id, table, true);
  expect(ready.job).toMatchObject({ status: 'done', semantic: true });
  return ready;
}

/** Indexing runs the real model: generous time, as CPU is shared with the other test files. */
const SLOW = 120_000;

beforeAll(async () => {
  t = await startTestServer({}, { now: () => Date.now() + clockOffsetMs });
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'enterprise');
  key = await createKey(t.client, owner, { rateLimitTier: 'enterprise' });
  await onSqlite(join(t.dataDir, 'sqlite', owner.id), sqliteFile, [
    'CREATE TABLE tips (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)',
    `INSERT INTO tips (id, title, body) VALUES ${values}`,
    "CREATE VIRTUAL TABLE tips_fts USING fts5(title, body, content='tips', content_rowid='id')",
    "INSERT INTO tips_fts(tips_fts) VALUES ('rebuild')",
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT)',
    "INSERT INTO notes (id, note) VALUES (1, 'Remember to water the <b>orchids</b> & ferns on Sunday')",
  ]);
  await onPostgres([
    `CREATE TABLE ${pgTable} (id int PRIMARY KEY, title text NOT NULL, body text)`,
    `INSERT INTO ${pgTable} (id, title, body) VALUES ${values}`,
    `CREATE INDEX ${pgTable}_fts ON ${pgTable} USING GIN (to_tsvector('english', title || ' ' || coalesce(body, '')))`,
  ]);
  sqliteDb = (await t.client.post('/api/v1/databases', { name: 'Tips (SQLite)', engine: 'sqlite', database: sqliteFile, environment: 'test' }, { token: owner.token })).body.data.database;
  pgDb = (await t.client.post('/api/v1/databases', postgresConnection({ name: 'Tips (PostgreSQL)', tables: [pgTable] }), { token: owner.token })).body.data.database;
  // Connecting synced the tables' text into the index: natural and hybrid read it from here on.
  await waitForIndex(t.client, owner.token, sqliteDb.id);
  await waitForIndex(t.client, owner.token, pgDb.id);
}, SLOW);
afterEach(() => t.assertContract());
afterAll(async () => {
  await onPostgres([`DROP TABLE IF EXISTS ${pgTable}`]).catch(() => undefined);
  await t?.stop();
});

describe('searchDatabases semantic: before any index', () => {
  it('when no selected table is searched by meaning, then 409 SEMANTIC_INDEX_REQUIRED names them and says how to turn it on', async () => {
    const admit = vi.spyOn(t.server.services.limits, 'admitAiRequest');
    try {
      const res = await search({ databases: [sqliteDb.id], tables: ['tips', 'notes'], query: 'insomnia remedies', searchMode: 'semantic' });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.error.code).toBe('SEMANTIC_INDEX_REQUIRED');
      expect(res.body.error.message).toContain('PATCH /api/v1/databases/{databaseId}/index/tables/{table}');
      expect(res.body.error.message).toMatch(/tips/);
      const tables = res.body.error.details.notIndexed.map((n: { table: string }) => n.table).sort();
      expect(tables).toEqual(['notes', 'tips']);
      for (const table of ['notes', 'tips']) {
        expect(res.body.error.details.notIndexed.find((n: { table: string }) => n.table === table))
          .toMatchObject({ databaseId: sqliteDb.id, reason: 'never_indexed', message: expect.stringContaining(turnOnHint(sqliteDb, table)) });
      }
      // Nothing was embedded, so nothing was counted.
      expect(admit).not.toHaveBeenCalled();
    } finally {
      admit.mockRestore();
    }
  });

  it('when hybrid runs over tables not searched by meaning, then the text ranking alone answers and they are listed with how to turn it on', async () => {
    const admit = vi.spyOn(t.server.services.limits, 'admitAiRequest');
    try {
      const res = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'kettle', searchMode: 'hybrid' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.results).toHaveLength(1);
      // The text ranking alone: with no ranking by meaning to agree with it, it keeps the whole weight (fusion.ts).
      expect(res.body.data.results[0]).toMatchObject({ table: 'tips', primaryKey: { id: 2 }, rank: 1, score: 1 });
      expect(res.body.data.semanticUnindexedTables).toEqual([{ databaseId: sqliteDb.id, table: 'tips', reason: 'never_indexed', message: expect.stringContaining(turnOnHint(sqliteDb, 'tips')) }]);
      // No table had vectors, so no query was embedded and no AI request counted.
      expect(admit).not.toHaveBeenCalled();
    } finally {
      admit.mockRestore();
    }
  });
});

describe('searchDatabases semantic and hybrid over indexed tables', () => {
  beforeAll(async () => {
    await turnSemanticOn(sqliteDb, 'tips');
    await turnSemanticOn(pgDb, pgTable);
  }, 2 * SLOW);

  describe.each([
    { engine: 'SQLite', db: () => sqliteDb, table: () => 'tips' },
    { engine: 'PostgreSQL', db: () => pgDb, table: () => pgTable },
  ])('$engine', ({ db, table }) => {
    it('when each paraphrase is searched, then natural mode misses the row and semantic and hybrid rank it first', async () => {
      for (const { query, id } of paraphrases) {
        // Typo tolerance off: "teach" is one edit from "each" of another row, which would then match by its words.
        const body = { databases: [db().id], tables: [table()], query, limit: 5, typoTolerance: false };
        const natural = await search({ ...body, searchMode: 'natural' });
        expect(natural.status).toBe(200);
        const naturalRank = natural.body.data.results.find((r: { primaryKey: { id: number } }) => r.primaryKey.id === id)?.rank ?? Infinity;
        expect(naturalRank, query).toBeGreaterThan(1);

        const semantic = await search({ ...body, searchMode: 'semantic' });
        expect(semantic.status, JSON.stringify(semantic.body)).toBe(200);
        const [first, second] = semantic.body.data.results;
        const row = semanticRows.find((r) => r.id === id)!;
        expect(first, query).toMatchObject({
          id: `${db().id}:${table()}:${id}`, databaseId: db().id, table: table(), primaryKey: { id }, rank: 1,
          fields: { id, title: row.title, body: row.body }, matchedColumns: ['title', 'body'],
        });
        expect(first.snippet).toContain(row.title);
        expect(first.score).toBeGreaterThan(0.2);
        expect(first.score).toBeLessThanOrEqual(1);
        expect(first.score).toBeGreaterThan(second?.score ?? -1);
        expect(semantic.body.data).toMatchObject({ searchMode: 'semantic', totalIsEstimate: false, approximate: false, unindexedTables: [], semanticUnindexedTables: [], liveTables: [] });
        expect(semantic.body.data.databases).toEqual([expect.objectContaining({ databaseId: db().id, source: 'index', approximate: false, indexedAt: expect.any(String) })]);
        expect(semantic.body.data.total).toBeGreaterThanOrEqual(semantic.body.data.results.length);

        const hybrid = await search({ ...body, searchMode: 'hybrid' });
        expect(hybrid.status, JSON.stringify(hybrid.body)).toBe(200);
        expect(hybrid.body.data.results[0], query).toMatchObject({ id: first.id, rank: 1, fields: { title: row.title } });
        // Found by meaning only, best of the vector ranking: its whole weight in the convex fusion (0.25 by default).
        expect(hybrid.body.data.results[0].score).toBeCloseTo(0.25, 8);
        const leaning = await search({ ...body, searchMode: 'hybrid', semanticRatio: 0.9 });
        expect(leaning.body.data.results[0], query).toMatchObject({ id: first.id, score: expect.closeTo(0.9, 8) });
      }
    }, SLOW);
  });

  it('when a row is found both by its words and by meaning, then hybrid fuses both rankings and keeps the highlights', async () => {
    const res = await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'guitar chords', searchMode: 'hybrid' });
    expect(res.status).toBe(200);
    const [first, second] = res.body.data.results;
    expect(first).toMatchObject({ primaryKey: { id: 12 }, rank: 1 });
    // Best of both rankings: 0.75 * 1 + 0.25 * 1.
    expect(first.score).toBeCloseTo(1, 8);
    expect(second.score).toBeLessThanOrEqual(0.25);
    expect(first.snippet).toBe('Learning to play <mark>guitar</mark>');
    expect(first.matchedColumns).toEqual(['title', 'body']);
  });

  it('when hybrid leans on meaning or on words, then semanticRatio sets the weight of each ranking', async () => {
    const body = { databases: [sqliteDb.id], tables: ['tips'], query: 'guitar sleep', searchMode: 'hybrid', limit: 3 };
    const words = await search({ ...body, semanticRatio: 0 });
    expect(words.status, JSON.stringify(words.body)).toBe(200);
    // Words alone: "guitar" as typed, and "sleep" (in no row) read as the typo of "asleep"; no row found only by meaning.
    expect(words.body.data.results.map((r: { primaryKey: { id: number } }) => r.primaryKey.id)).toEqual([12, 8]);
    expect(words.body.data.corrections).toEqual([{ word: 'sleep', correctedTo: 'asleep' }]);
    const meaning = await search({ ...body, semanticRatio: 1 });
    expect(meaning.body.data.results.length).toBeGreaterThan(1);
    expect(meaning.body.data.results[0].score).toBeCloseTo(1, 8);
    const bad = await search({ ...body, semanticRatio: 1.5 });
    expect(bad.status).toBe(400);
  });

  it('when semantic results are paged with nextCursor, then ranks continue and no row repeats', async () => {
    const body = { databases: [sqliteDb.id, pgDb.id], query: 'household chores and repairs', searchMode: 'semantic', limit: 3 };
    const first = await search(body);
    expect(first.status).toBe(200);
    expect(first.body.data.results.map((r: { rank: number }) => r.rank)).toEqual([1, 2, 3]);
    expect(first.body.data.hasMore).toBe(true);
    const second = await search({ ...body, cursor: first.body.data.nextCursor });
    expect(second.status).toBe(200);
    expect(second.body.data.offset).toBe(3);
    expect(second.body.data.results.map((r: { rank: number }) => r.rank)).toEqual([4, 5, 6]);
    expect(second.body.data.results[0].score).toBeLessThanOrEqual(first.body.data.results[2].score);
    const ids = [...first.body.data.results, ...second.body.data.results].map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(6);
    expect(second.body.data.total).toBe(first.body.data.total);
    const matches = first.body.data.databases.reduce((sum: number, d: { matches: number }) => sum + d.matches, 0);
    expect(matches).toBe(first.body.data.total);
  });

  it('when some selected tables are searched by meaning and others not, then the first answer and the others are listed; once turned on, they are searched at once', async () => {
    const body = { databases: [sqliteDb.id], tables: ['tips', 'notes'], query: 'caring for house plants', searchMode: 'semantic', limit: 20 };
    const before = await search(body);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body.data.semanticUnindexedTables).toEqual([
      { databaseId: sqliteDb.id, table: 'notes', reason: 'never_indexed', message: expect.stringContaining(turnOnHint(sqliteDb, 'notes')) },
    ]);
    expect(before.body.data.results.every((r: { table: string }) => r.table === 'tips')).toBe(true);

    await turnSemanticOn(sqliteDb, 'notes');
    const after = await search(body);
    expect(after.status).toBe(200);
    expect(after.body.data.semanticUnindexedTables).toEqual([]);
    const note = after.body.data.results.find((r: { table: string }) => r.table === 'notes');
    expect(note).toMatchObject({ primaryKey: { id: 1 }, matchedColumns: ['note'] });
    expect(note.snippet).toBe('Remember to water the &lt;b&gt;orchids&lt;/b&gt; &amp; ferns on Sunday');
  }, SLOW);

  it('when semantic and hybrid searches run, then each counts one AI request', async () => {
    const admit = vi.spyOn(t.server.services.limits, 'admitAiRequest');
    try {
      await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'insomnia remedies', searchMode: 'semantic' });
      await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'insomnia remedies', searchMode: 'hybrid' });
      await search({ databases: [sqliteDb.id], tables: ['tips'], query: 'insomnia remedies', searchMode: 'natural' });
      expect(admit).toHaveBeenCalledTimes(2);
    } finally {
      admit.mockRestore();
    }
  });

  it('when a free key makes its 101st semantic search within the hour, then 429 AI_RATE_LIMIT_EXCEEDED', async () => {
    const free = await createKey(t.client, owner, { rateLimitTier: 'free' });
    const body = { databases: [sqliteDb.id], tables: ['tips'], query: 'insomnia remedies', searchMode: 'semantic', limit: 1 };
    try {
      for (let i = 0; i < 100; i += 1) {
        // Two seconds apart on the server's clock: well inside the hour, never a burst.
        clockOffsetMs += 2_000;
        const res = await search(body, free.secret);
        expect(res.status, `search ${i + 1}: ${JSON.stringify(res.body)}`).toBe(200);
      }
      clockOffsetMs += 2_000;
      const refused = await search({ ...body, searchMode: 'hybrid' }, free.secret);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'AI_RATE_LIMIT_EXCEEDED', details: { tier: 'free' } });
    } finally {
      clockOffsetMs = 0;
    }
  }, SLOW);
});
