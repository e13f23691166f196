/**
 * The connection layer against the real MariaDB/MySQL (MYSQL_URL, default mysql://root@127.0.0.1:3306/test):
 * connection tests (including a wrong password), schema discovery with and without FULLTEXT indexes, read-only
 * enforcement, statement timeouts and pooling. Each run creates its own uniquely named tables and drops them.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/connectors/connection-test.js';
import { createExecutor } from '../../src/connectors/executor.js';
import { PoolManager } from '../../src/connectors/pool-manager.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import type { PooledExecutor } from '../../src/connectors/types.js';
import {
  elapsedMs, IN_CI, LOOPBACK_POLICY, reachable, rejection, settingsFromUrl, uniqueName, warnSkipped,
} from './connectors-support.js';

const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const base = settingsFromUrl('mysql', MYSQL_URL);
const up = await reachable(base.host ?? '127.0.0.1', base.port ?? 3306);
if (!up) {
  warnSkipped('connectors-mysql', `MariaDB/MySQL at ${base.host}:${base.port}`,
    'Start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd');
}

describe('MariaDB for the connector integration tests', () => {
  it.runIf(!up && IN_CI)('when CI is true, then MariaDB must be reachable', () => {
    throw new Error(`MariaDB/MySQL is unreachable at ${base.host}:${base.port}; start it or set MYSQL_URL`);
  });
  it.runIf(up)('when the tests start, then MariaDB accepts connections', () => expect(up).toBe(true));
});

describe.skipIf(!up)('connectors on MariaDB/MySQL', () => {
  const plain = uniqueName('q_plain');
  const docs = uniqueName('q_docs');
  let admin: mysql.Connection;
  let executor: PooledExecutor;
  const q = { timeoutMs: 5000 };

  beforeAll(async () => {
    admin = await mysql.createConnection(MYSQL_URL);
    await admin.query(`CREATE TABLE ${plain} (id INT AUTO_INCREMENT PRIMARY KEY, title TEXT, label VARCHAR(80),
      code CHAR(3), n INT, doc JSON, kind ENUM('a','b')) ENGINE=InnoDB`);
    await admin.query(`INSERT INTO ${plain} (title, label, code, n) VALUES ('a', 'b', 'abc', 1), ('c', 'd', 'def', 2), ('e', 'f', 'ghi', 3)`);
    await admin.query(`ANALYZE TABLE ${plain}`);
    await admin.query(`CREATE TABLE ${docs} (tenant INT, id INT, title VARCHAR(200) NOT NULL, body TEXT NOT NULL,
      PRIMARY KEY (tenant, id), FULLTEXT KEY ${docs}_ft (title, body), FULLTEXT KEY ${docs}_title (title)) ENGINE=InnoDB`);
    await admin.query(`INSERT INTO ${docs} VALUES (1, 1, 'Wireless headphones', 'Noise cancelling over-ear headphones'),
      (1, 2, 'Wired earbuds', 'Cheap and cheerful'), (1, 3, 'Desk lamp', 'Warm light for reading')`);
    executor = await createExecutor(base, { hostPolicy: LOOPBACK_POLICY });
  });

  afterAll(async () => {
    await executor?.close();
    await admin?.query(`DROP TABLE IF EXISTS ${plain}, ${docs}`);
    await admin?.end();
  });

  describe('testConnection', () => {
    it('when the settings are right, then ok with the server version', async () => {
      const result = await testConnection(base, { hostPolicy: LOOPBACK_POLICY });
      expect(result).toMatchObject({ ok: true, error: null });
      expect(result.serverVersion).toMatch(/^(MariaDB|MySQL) \d+\.\d+/);
    });

    it('when the password is wrong, then DATABASE_AUTH_FAILED with a message that names nobody', async () => {
      const result = await testConnection({ ...base, password: 'definitely-not-the-password' }, { hostPolicy: LOOPBACK_POLICY });
      expect(result).toMatchObject({ ok: false, error: { code: 'DATABASE_AUTH_FAILED' } });
      expect(result.error?.message).not.toMatch(/root|127\.0\.0\.1|password: YES/);
    });

    it('when the database does not exist, then DATABASE_NOT_FOUND', async () => {
      const result = await testConnection({ ...base, database: uniqueName('nope') }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('DATABASE_NOT_FOUND');
    });

    it('when the port is closed, then DATABASE_UNREACHABLE', async () => {
      const result = await testConnection({ ...base, port: 1 }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('DATABASE_UNREACHABLE');
    });

    it('when the host is a metadata address, then HOST_NOT_ALLOWED', async () => {
      const start = Date.now();
      const result = await testConnection({ ...base, host: '169.254.169.254', port: 3306 }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('HOST_NOT_ALLOWED');
      expect(elapsedMs(start)).toBeLessThan(500);
    });

    it('when TLS is required and the server does not offer it, then DATABASE_TLS_ERROR', async () => {
      const [[row]] = await admin.query<mysql.RowDataPacket[]>("SHOW VARIABLES LIKE 'have_ssl'");
      if (row?.Value === 'YES') return; // this server offers TLS with a certificate we cannot check here
      const result = await testConnection({ ...base, ssl: true }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('DATABASE_TLS_ERROR');
    });
  });

  describe('discoverSchema', () => {
    it('when a table has no FULLTEXT index, then columns, text columns, primary key and estimate are reported', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: [plain] });
      expect(tables).toHaveLength(1);
      expect(tables[0]).toMatchObject({
        name: plain,
        schema: null,
        primaryKey: ['id'],
        textColumns: ['title', 'label', 'code'],
        fullTextIndexes: [],
      });
      expect(tables[0]?.rowEstimate).toBeGreaterThanOrEqual(0);
      expect(tables[0]?.columns.map((c) => [c.name, c.searchable])).toEqual([
        ['id', false], ['title', true], ['label', true], ['code', true], ['n', false], ['doc', false], ['kind', false],
      ]);
      expect(tables[0]?.columns[2]).toEqual({ name: 'label', type: 'varchar(80)', searchable: true });
      // MariaDB stores JSON as LONGTEXT with a json_valid check: still not searchable text.
      expect(tables[0]?.columns[5]).toEqual({ name: 'doc', type: 'json', searchable: false });
      expect(fullTextIndexes).toEqual([]);
    });

    it('when FULLTEXT indexes exist, then each is reported with its columns in index order, usable by MATCH', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: [docs.toUpperCase()] });
      expect(tables[0]).toMatchObject({ name: docs, primaryKey: ['tenant', 'id'], textColumns: ['title', 'body'] });
      expect(tables[0]?.fullTextIndexes).toEqual([
        { name: `${docs}_ft`, kind: 'mysql_fulltext', columns: ['title', 'body'] },
        { name: `${docs}_title`, kind: 'mysql_fulltext', columns: ['title'] },
      ]);
      const index = fullTextIndexes.find((i) => i.name === `${docs}_ft`);
      const columns = index?.columns.map((c) => executor.quoteIdent(c)).join(', ');
      const rows = await executor.query<{ id: number }>(
        `SELECT id FROM ${executor.quoteIdent(docs)} WHERE MATCH (${columns}) AGAINST (? IN BOOLEAN MODE) ORDER BY id`,
        ['+headphones -wired'],
        q,
      );
      expect(rows).toEqual([{ id: 1 }]);
    });

    it('when there is no allow-list, then every base table of the database is listed', async () => {
      const { tables } = await discoverSchema(executor, { tables: null });
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining([plain, docs]));
    });
  });

  describe('read-only enforcement', () => {
    async function snapshot() {
      const [rows] = await admin.query(`SELECT id, title, label FROM ${plain} ORDER BY id`);
      return rows;
    }

    it.each([
      `INSERT INTO %T (title) VALUES ('x')`,
      `UPDATE %T SET title = 'x'`,
      'DELETE FROM %T',
      'CREATE TABLE %T_copy (id int)',
      'SELECT 1; DELETE FROM %T',
      'SET SESSION TRANSACTION READ WRITE',
      "SELECT * FROM %T INTO OUTFILE '/tmp/quarry-out.txt'",
    ])('when "%s" is sent through the executor, then it fails and the data is unchanged', async (template) => {
      const before = await snapshot();
      const err = await rejection(executor.query(template.replace(/%T/g, plain), [], q));
      expect(err.code).toBe('DATABASE_ERROR');
      expect(await snapshot()).toEqual(before);
    });

    it('when a SELECT calls a function that writes, then the read-only session refuses it', async () => {
      await admin.query(`CREATE FUNCTION ${plain}_bump() RETURNS INT MODIFIES SQL DATA
        BEGIN INSERT INTO ${plain} (title) VALUES ('bumped'); RETURN 1; END`);
      try {
        const before = await snapshot();
        const err = await rejection(executor.query(`SELECT ${plain}_bump() AS b`, [], q));
        expect(err).toMatchObject({ code: 'DATABASE_ERROR', details: { reason: 'not_read_only' } });
        expect(await snapshot()).toEqual(before);
      } finally {
        await admin.query(`DROP FUNCTION IF EXISTS ${plain}_bump`);
      }
    });

    it('when a query runs, then its session is a read-only transaction session', async () => {
      const rows = await executor.query<{ ro: number }>('SELECT @@SESSION.tx_read_only AS ro', [], q);
      expect(Number(rows[0]?.ro)).toBe(1);
    });
  });

  describe('timeouts and pooling', () => {
    it('when a statement runs past its limit, then DATABASE_TIMEOUT comes quickly and the pool keeps working', async () => {
      const start = Date.now();
      const err = await rejection(executor.query('SELECT SLEEP(5) AS s', [], { timeoutMs: 300 }));
      expect(err.code).toBe('DATABASE_TIMEOUT');
      expect(elapsedMs(start)).toBeLessThan(2000);
      await expect(executor.query('SELECT 1 AS one', [], q)).resolves.toEqual([{ one: 1 }]);
    });

    it('when parameters are given, then they are bound, never interpolated', async () => {
      const hostile = "'); DROP TABLE users; -- \\";
      await expect(executor.query('SELECT ? AS v', [hostile], q)).resolves.toEqual([{ v: hostile }]);
    });

    it('when the pool manager is asked twice for one id, then the same executor serves both; close ends the pool', async () => {
      const manager = new PoolManager({ hostPolicy: LOOPBACK_POLICY, max: 2 });
      try {
        const a = await manager.get('db_my', base);
        expect(await manager.get('db_my', base)).toBe(a);
        await Promise.all([1, 2, 3, 4].map(() => a.query('SELECT SLEEP(0.05) AS s', [], q)));
        expect(manager.stats('db_my')).toMatchObject({ open: true, total: 2, idle: 2, waiting: 0, max: 2 });
        await manager.close('db_my');
        expect(manager.stats('db_my')).toBeNull();
        await expect(a.query('SELECT 1', [], q)).rejects.toMatchObject({ code: 'DATABASE_UNREACHABLE' });
      } finally {
        await manager.closeAll();
      }
    });
  });
});
