/**
 * The connection layer against a real SQLite file in a temporary SQLite directory: path policy, connection tests,
 * schema discovery with ordinary tables and FTS5 tables (own and external content), read-only enforcement,
 * interrupting a runaway statement and pooling.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/connectors/connection-test.js';
import { createExecutor } from '../../src/connectors/executor.js';
import { PoolManager } from '../../src/connectors/pool-manager.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import { resolveSqlitePath } from '../../src/connectors/sqlite-path.js';
import type { ConnectionSettings, PooledExecutor } from '../../src/connectors/types.js';
import { elapsedMs, LOOPBACK_POLICY, rejection } from './connectors-support.js';

const SEED = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body VARCHAR(500), stars INT, price REAL, raw BLOB, misc);
INSERT INTO notes (title, body, stars) VALUES ('Groceries', 'milk, eggs, bread', 3), ('Trip', 'pack headphones', 5), ('Ideas', 'none yet', 1);
CREATE TABLE pairs (a TEXT, b TEXT, note TEXT, PRIMARY KEY (b, a)) WITHOUT ROWID;
CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body TEXT, author TEXT);
INSERT INTO docs VALUES (1, 'Wireless headphones', 'Noise cancelling over-ear headphones', 'ann'), (2, 'Wired earbuds', 'Cheap and cheerful', 'bob'), (3, 'Desk lamp', 'Warm light', 'cy');
CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, content='docs', content_rowid='id');
INSERT INTO docs_fts(docs_fts) VALUES ('rebuild');
CREATE VIRTUAL TABLE memo USING fts5(subject, text, tag UNINDEXED, tokenize = 'porter');
INSERT INTO memo VALUES ('Call the plumber', 'kitchen sink leaks', 'home'), ('Renew passport', 'before the trip', 'admin');
`;

function openWritable(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}

function run(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

describe('connectors on SQLite', () => {
  let dataDir: string;
  let admin: sqlite3.Database;
  let settings: ConnectionSettings;
  let executor: PooledExecutor;
  const q = { timeoutMs: 5000 };
  const policy = { hostPolicy: LOOPBACK_POLICY };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'quarry-sqlite-it-'));
    admin = await openWritable(path.join(dataDir, 'notes.db'));
    await run(admin, SEED);
    const file = await resolveSqlitePath('notes.db', dataDir);
    settings = { engine: 'sqlite', host: null, port: null, database: file, username: null, password: null, ssl: false, tables: null };
    executor = await createExecutor(settings, policy);
  });

  afterAll(async () => {
    await executor?.close();
    await new Promise<void>((resolve) => (admin ? admin.close(() => resolve()) : resolve()));
    await rm(dataDir, { recursive: true, force: true });
  });

  describe('testConnection', () => {
    it('when the file is inside the SQLite directory, then ok with the SQLite version', async () => {
      const result = await testConnection(settings, policy);
      expect(result).toMatchObject({ ok: true, error: null });
      expect(result.serverVersion).toMatch(/^SQLite 3\.\d+/);
    });

    it('when the file is missing, then DATABASE_NOT_FOUND and no file is created', async () => {
      const missing = path.join(dataDir, 'missing.db');
      const result = await testConnection({ ...settings, database: missing }, policy);
      expect(result.error?.code).toBe('DATABASE_NOT_FOUND');
      expect(existsSync(missing)).toBe(false);
      await expect(resolveSqlitePath('missing.db', dataDir)).rejects.toMatchObject({ code: 'DATABASE_NOT_FOUND' });
    });

    it('when the path leaves the SQLite directory, then SQLITE_PATH_NOT_ALLOWED', async () => {
      await expect(resolveSqlitePath('../notes.db', dataDir)).rejects.toMatchObject({ code: 'SQLITE_PATH_NOT_ALLOWED' });
      await expect(resolveSqlitePath(path.join(dataDir, 'notes.db'), dataDir)).rejects.toMatchObject({ code: 'SQLITE_PATH_NOT_ALLOWED' });
    });
  });

  describe('discoverSchema', () => {
    it('when a table has no FTS5 index, then TEXT-affinity columns are searchable and the primary key is reported', async () => {
      const { tables } = await discoverSchema(executor, { tables: ['notes', 'pairs'] });
      expect(tables).toEqual([
        {
          name: 'notes',
          schema: null,
          primaryKey: ['id'],
          rowEstimate: 3,
          columns: [
            { name: 'id', type: 'INTEGER', searchable: false },
            { name: 'title', type: 'TEXT', searchable: true },
            { name: 'body', type: 'VARCHAR(500)', searchable: true },
            { name: 'stars', type: 'INT', searchable: false },
            { name: 'price', type: 'REAL', searchable: false },
            { name: 'raw', type: 'BLOB', searchable: false },
            { name: 'misc', type: '', searchable: false },
          ],
          textColumns: ['title', 'body'],
          fullTextIndexes: [],
        },
        expect.objectContaining({ name: 'pairs', primaryKey: ['b', 'a'], textColumns: ['a', 'b', 'note'], fullTextIndexes: [] }),
      ]);
    });

    it('when FTS5 tables exist, then they are tables with an fts5 index and shadow tables are hidden', async () => {
      const { tables } = await discoverSchema(executor, { tables: null });
      const names = tables.map((t) => t.name);
      expect(names).toEqual(['docs', 'docs_fts', 'memo', 'notes', 'pairs']);
      const memo = tables.find((t) => t.name === 'memo');
      expect(memo).toEqual({
        name: 'memo',
        schema: null,
        primaryKey: ['rowid'],
        rowEstimate: 2,
        columns: [
          { name: 'subject', type: 'TEXT', searchable: true },
          { name: 'text', type: 'TEXT', searchable: true },
          { name: 'tag', type: 'TEXT', searchable: false },
        ],
        textColumns: ['subject', 'text'],
        fullTextIndexes: [{ name: 'memo', kind: 'fts5', columns: ['subject', 'text'] }],
      });
    });

    it('when an FTS5 table has external content, then the content table carries the index and MATCH works through it', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: ['docs'] });
      expect(tables.map((t) => t.name)).toEqual(['docs']);
      expect(tables[0]).toMatchObject({
        primaryKey: ['id'],
        textColumns: ['title', 'body', 'author'],
        fullTextIndexes: [{ name: 'docs_fts', kind: 'fts5', columns: ['title', 'body'] }],
      });
      const info = fullTextIndexes[0];
      expect(info).toMatchObject({ table: 'docs', ftsTable: 'docs_fts', contentTable: 'docs', contentRowid: 'id' });
      const rows = await executor.query<{ id: number }>(
        `SELECT d.id FROM ${executor.quoteIdent(info?.ftsTable ?? '')} f JOIN docs d ON d.${info?.contentRowid} = f.rowid
         WHERE f.${executor.quoteIdent(info?.ftsTable ?? '')} MATCH ? ORDER BY bm25(f.${executor.quoteIdent(info?.ftsTable ?? '')})`,
        ['headphones'],
        q,
      );
      expect(rows).toEqual([{ id: 1 }]);
    });

    it('when the FTS5 table itself is discovered, then it names its content table', async () => {
      const { fullTextIndexes } = await discoverSchema(executor, { tables: ['docs_fts'] });
      expect(fullTextIndexes).toEqual([
        expect.objectContaining({ table: 'docs_fts', name: 'docs_fts', columns: ['title', 'body'], contentTable: 'docs', contentRowid: 'id' }),
      ]);
    });
  });

  describe('read-only enforcement', () => {
    async function snapshot() {
      return all(admin, 'SELECT id, title, body FROM notes ORDER BY id');
    }

    it.each([
      "INSERT INTO notes (title) VALUES ('x')",
      "UPDATE notes SET title = 'x'",
      'DELETE FROM notes',
      'CREATE TABLE copy (id int)',
      'CREATE TEMP TABLE scratch (id int)',
      'DROP TABLE notes',
      'SELECT 1; DELETE FROM notes',
      "INSERT INTO memo VALUES ('a', 'b', 'c')",
      'PRAGMA query_only = OFF',
    ])('when "%s" is sent through the executor, then it fails and the data is unchanged', async (sql) => {
      const before = await snapshot();
      const err = await rejection(executor.query(sql, [], q));
      expect(err.code).toBe('DATABASE_ERROR');
      expect(await snapshot()).toEqual(before);
    });

    it('when VACUUM INTO or ATTACH is attempted, then nothing is written anywhere', async () => {
      const copy = path.join(dataDir, 'copy.db');
      await rejection(executor.query(`VACUUM INTO '${copy}'`, [], q));
      await rejection(executor.query(`ATTACH DATABASE '${copy}' AS other`, [], q));
      expect(existsSync(copy)).toBe(false);
    });
  });

  describe('timeouts and pooling', () => {
    it('when a statement runs past its limit, then it is interrupted with DATABASE_TIMEOUT and the pool keeps working', async () => {
      const start = Date.now();
      const err = await rejection(
        executor.query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], { timeoutMs: 300 }),
      );
      expect(err.code).toBe('DATABASE_TIMEOUT');
      expect(elapsedMs(start)).toBeLessThan(2000);
      await expect(executor.query('SELECT 1 AS one', [], q)).resolves.toEqual([{ one: 1 }]);
    });

    it('when one handle is interrupted, then a query on another handle finishes', async () => {
      const slow = executor.query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], { timeoutMs: 300 });
      const fast = executor.query<{ n: number }>('SELECT count(*) AS n FROM notes', [], q);
      await expect(fast).resolves.toEqual([{ n: 3 }]);
      await expect(slow).rejects.toMatchObject({ code: 'DATABASE_TIMEOUT' });
    });

    it('when the pool manager is asked twice for one id, then the same executor serves both; close ends the pool', async () => {
      const manager = new PoolManager({ hostPolicy: LOOPBACK_POLICY, max: 2 });
      try {
        const a = await manager.get('db_lite', settings);
        expect(await manager.get('db_lite', settings)).toBe(a);
        await Promise.all([1, 2, 3].map(() => a.query('SELECT count(*) AS n FROM notes', [], q)));
        expect(manager.stats('db_lite')).toMatchObject({ open: true, waiting: 0, max: 2 });
        await manager.close('db_lite');
        expect(manager.stats('db_lite')).toBeNull();
        await expect(a.query('SELECT 1', [], q)).rejects.toMatchObject({ code: 'DATABASE_UNREACHABLE' });
      } finally {
        await manager.closeAll();
      }
    });
  });
});
