/**
 * The connection layer against the real PostgreSQL (PG_URL, default postgres://postgres@127.0.0.1:5432/test):
 * connection tests, schema discovery with and without GIN full-text indexes, error codes, read-only enforcement,
 * statement timeouts and pooling. Each run creates its own uniquely named tables and schema and drops them.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testConnection } from '../../src/connectors/connection-test.js';
import { createExecutor } from '../../src/connectors/executor.js';
import { PoolManager } from '../../src/connectors/pool-manager.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import type { PooledExecutor } from '../../src/connectors/types.js';
import {
  elapsedMs, IN_CI, LOOPBACK_POLICY, reachable, rejection, settingsFromUrl, uniqueName, warnSkipped,
} from './connectors-support.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const base = settingsFromUrl('postgres', PG_URL);
const up = await reachable(base.host ?? '127.0.0.1', base.port ?? 5432);
if (!up) {
  warnSkipped('connectors-postgres', `PostgreSQL at ${base.host}:${base.port}`,
    'Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start');
}

describe('PostgreSQL for the connector integration tests', () => {
  it.runIf(!up && IN_CI)('when CI is true, then PostgreSQL must be reachable', () => {
    throw new Error(`PostgreSQL is unreachable at ${base.host}:${base.port}; start it or set PG_URL`);
  });
  it.runIf(up)('when the tests start, then PostgreSQL accepts connections', () => expect(up).toBe(true));
});

describe.skipIf(!up)('connectors on PostgreSQL', () => {
  const plain = uniqueName('q_plain');
  const docs = uniqueName('q_docs');
  const generated = uniqueName('q_gen');
  const schema = uniqueName('q_schema');
  let admin: pg.Client;
  let executor: PooledExecutor;
  const q = { timeoutMs: 5000 };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${plain} (id serial PRIMARY KEY, title text, label varchar(80), code char(3), n integer, meta jsonb)`);
    await admin.query(`INSERT INTO ${plain} (title, label, code, n) VALUES ('a', 'b', 'abc', 1), ('c', 'd', 'def', 2), ('e', 'f', 'ghi', 3)`);
    await admin.query(`ANALYZE ${plain}`);
    await admin.query(`CREATE TABLE ${docs} (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)`);
    await admin.query(`INSERT INTO ${docs} VALUES (1, 'Wireless headphones', 'Noise cancelling over-ear headphones'),
      (2, 'Wired earbuds', 'Cheap and cheerful'), (3, 'Desk lamp', 'Warm light for reading')`);
    await admin.query(`CREATE INDEX ${docs}_fts ON ${docs} USING gin (to_tsvector('english', title || ' ' || body))`);
    await admin.query(`CREATE TABLE ${generated} (a integer, b integer, title text, body text,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED,
      PRIMARY KEY (b, a))`);
    await admin.query(`CREATE INDEX ${generated}_tsv ON ${generated} USING gin (tsv)`);
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.orders (id bigint PRIMARY KEY, note text)`);
    executor = await createExecutor(base, { hostPolicy: LOOPBACK_POLICY });
  });

  afterAll(async () => {
    await executor?.close();
    await admin?.query(`DROP TABLE IF EXISTS ${plain}, ${docs}, ${generated}`);
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  describe('testConnection', () => {
    it('when the settings are right, then ok with the server version and latency', async () => {
      const result = await testConnection(base, { hostPolicy: LOOPBACK_POLICY });
      expect(result).toMatchObject({ ok: true, error: null });
      expect(result.serverVersion).toMatch(/^PostgreSQL \d+(\.\d+)*$/);
      expect(result.latencyMs).toBeGreaterThanOrEqual(0);
      expect(new Date(result.testedAt).toISOString()).toBe(result.testedAt);
    });

    it('when the database does not exist, then DATABASE_NOT_FOUND', async () => {
      const result = await testConnection({ ...base, database: uniqueName('nope') }, { hostPolicy: LOOPBACK_POLICY });
      expect(result).toMatchObject({ ok: false, serverVersion: null, error: { code: 'DATABASE_NOT_FOUND' } });
    });

    it('when the port is closed, then DATABASE_UNREACHABLE', async () => {
      const result = await testConnection({ ...base, port: 1 }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('DATABASE_UNREACHABLE');
      expect(result.error?.message).not.toMatch(/127\.0\.0\.1|:1\b/);
    });

    it('when TLS is required and the server offers none, then DATABASE_TLS_ERROR', async () => {
      const result = await testConnection({ ...base, ssl: true }, { hostPolicy: LOOPBACK_POLICY });
      expect(result.error?.code).toBe('DATABASE_TLS_ERROR');
    });

    it('when the host is a metadata address, then HOST_NOT_ALLOWED and no socket is opened', async () => {
      const connect = vi.spyOn(net.Socket.prototype, 'connect');
      try {
        const start = Date.now();
        const result = await testConnection({ ...base, host: '169.254.169.254' }, {
          hostPolicy: { allowlist: [], allowPrivate: true, allowLoopback: true },
        });
        expect(result.error?.code).toBe('HOST_NOT_ALLOWED');
        expect(connect).not.toHaveBeenCalled();
        expect(elapsedMs(start)).toBeLessThan(500);
      } finally {
        connect.mockRestore();
      }
    });

    it('when loopback is not allowed by the policy, then the local server is refused', async () => {
      const result = await testConnection(base, { hostPolicy: { allowlist: [], allowPrivate: true, allowLoopback: false } });
      expect(result.error?.code).toBe('HOST_NOT_ALLOWED');
    });
  });

  describe('discoverSchema', () => {
    it('when a table has no full-text index, then columns, text columns, primary key and estimate are reported', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: [plain] });
      expect(tables).toEqual([
        {
          name: plain,
          schema: 'public',
          primaryKey: ['id'],
          rowEstimate: 3,
          columns: [
            { name: 'id', type: 'integer', searchable: false },
            { name: 'title', type: 'text', searchable: true },
            { name: 'label', type: 'character varying(80)', searchable: true },
            { name: 'code', type: 'character(3)', searchable: true },
            { name: 'n', type: 'integer', searchable: false },
            { name: 'meta', type: 'jsonb', searchable: false },
          ],
          textColumns: ['title', 'label', 'code'],
          fullTextIndexes: [],
        },
      ]);
      expect(fullTextIndexes).toEqual([]);
    });

    it('when a GIN index covers to_tsvector over two columns, then it is reported with those columns and its expression', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: [docs] });
      expect(tables[0]?.fullTextIndexes).toEqual([{ name: `${docs}_fts`, kind: 'gin_tsvector', columns: ['title', 'body'] }]);
      const info = fullTextIndexes[0];
      expect(info).toMatchObject({ table: docs, schema: 'public', language: 'english' });
      expect(info?.expression).toMatch(/^to_tsvector\('english'::regconfig/);
      // The expression is what search must repeat for the planner to use the index: it runs as is.
      const rows = await executor.query<{ id: number }>(
        `SELECT id FROM ${docs} WHERE ${info?.expression} @@ websearch_to_tsquery('english', $1) ORDER BY id`,
        ['headphones'],
        q,
      );
      expect(rows).toEqual([{ id: 1 }]);
    });

    it('when a GIN index is on a generated tsvector column, then the source text columns are reported', async () => {
      const { tables, fullTextIndexes } = await discoverSchema(executor, { tables: [generated] });
      expect(tables[0]).toMatchObject({
        primaryKey: ['b', 'a'],
        textColumns: ['title', 'body'],
        fullTextIndexes: [{ name: `${generated}_tsv`, kind: 'gin_tsvector', columns: ['title', 'body'] }],
      });
      expect(tables[0]?.columns.find((c) => c.name === 'tsv')).toEqual({ name: 'tsv', type: 'tsvector', searchable: false });
      expect(fullTextIndexes[0]).toMatchObject({ expression: '"tsv"', language: 'simple' });
    });

    it('when there is no allow-list, then public tables are listed and other schemas are not', async () => {
      const { tables } = await discoverSchema(executor, { tables: null });
      const names = tables.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining([plain, docs, generated]));
      expect(names).not.toContain('orders');
      expect(tables.every((t) => t.schema === 'public')).toBe(true);
    });

    it('when the allow-list names schema.table, then that table of that schema is discovered', async () => {
      const { tables } = await discoverSchema(executor, { tables: [`${schema}.orders`, docs] });
      expect(tables.map((t) => `${t.schema}.${t.name}`).sort()).toEqual([`${schema}.orders`, `public.${docs}`].sort());
      expect(tables.find((t) => t.name === 'orders')?.primaryKey).toEqual(['id']);
    });
  });

  describe('read-only enforcement', () => {
    async function snapshot() {
      return (await admin.query(`SELECT id, title, label FROM ${plain} ORDER BY id`)).rows;
    }

    it.each([
      `INSERT INTO %T (title) VALUES ('x')`,
      `UPDATE %T SET title = 'x'`,
      'DELETE FROM %T',
      'CREATE TABLE %T_copy (id int)',
      'DROP TABLE %T',
      'SELECT 1; DELETE FROM %T',
      'TRUNCATE %T',
    ])('when "%s" is sent through the executor, then it fails and the data is unchanged', async (template) => {
      const before = await snapshot();
      const err = await rejection(executor.query(template.replace(/%T/g, plain), [], q));
      expect(err.code).toBe('DATABASE_ERROR');
      expect(await snapshot()).toEqual(before);
    });

    it('when a write hides inside a SELECT-shaped statement, then the read-only transaction refuses it', async () => {
      const before = await snapshot();
      const err = await rejection(executor.query(`WITH gone AS (DELETE FROM ${plain} RETURNING id) SELECT count(*) FROM gone`, [], q));
      expect(err).toMatchObject({ code: 'DATABASE_ERROR', details: { reason: 'not_read_only', driverCode: '25006' } });
      const seq = await rejection(executor.query(`SELECT nextval(pg_get_serial_sequence('${plain}', 'id'))`, [], q));
      expect(seq.code).toBe('DATABASE_ERROR');
      expect(await snapshot()).toEqual(before);
    });

    it('when the session tries to switch itself to read-write, then the next query is still read-only', async () => {
      await rejection(executor.query("SELECT set_config('transaction_read_only', 'off', false)", [], q));
      await executor.query("SELECT set_config('default_transaction_read_only', 'off', false)", [], q);
      const err = await rejection(executor.query(`WITH gone AS (DELETE FROM ${plain} RETURNING id) SELECT count(*) FROM gone`, [], q));
      expect(err.details.reason).toBe('not_read_only');
    });
  });

  describe('timeouts and pooling', () => {
    it('when a statement runs past its limit, then DATABASE_TIMEOUT comes quickly and the pool keeps working', async () => {
      const start = Date.now();
      const err = await rejection(executor.query('SELECT pg_sleep(5)', [], { timeoutMs: 300 }));
      expect(err.code).toBe('DATABASE_TIMEOUT');
      expect(err.message).toBe('The database did not answer within 300 ms.');
      expect(elapsedMs(start)).toBeLessThan(2000);
      await expect(executor.query('SELECT 1 AS one', [], q)).resolves.toEqual([{ one: 1 }]);
    });

    it('when one connection serves many queries back to back, then each runs in its own read-only transaction, ended before the next', async () => {
      // Many queries share one connection; each must find it clean: no transaction left open by the one before.
      const single = await createExecutor(base, { hostPolicy: LOOPBACK_POLICY, max: 1 });
      try {
        const sql = "SELECT pg_backend_pid() AS pid, transaction_timestamp()::text AS began, current_setting('transaction_read_only') AS ro";
        const rows = await Promise.all(Array.from({ length: 20 }, () => single.query<{ pid: number; began: string; ro: string }>(sql, [], q)));
        const sequential = [];
        for (let i = 0; i < 5; i++) sequential.push(...(await single.query<{ pid: number; began: string; ro: string }>(sql, [], q)));
        const all = [...rows.flat(), ...sequential];
        expect(new Set(all.map((r) => r.pid)).size).toBe(1);
        expect(all.every((r) => r.ro === 'on')).toBe(true);
        // A new transaction per query: no two queries share a transaction start.
        expect(new Set(all.map((r) => r.began)).size).toBe(all.length);
        // Then the transaction ends and the connection goes back to the pool, idle (not "idle in transaction").
        await vi.waitFor(async () => {
          const activity = await admin.query('SELECT state FROM pg_stat_activity WHERE pid = $1', [all[0]!.pid]);
          expect(activity.rows[0]?.state).toBe('idle');
          expect(single.stats()).toMatchObject({ total: 1, idle: 1, waiting: 0 });
        });
      } finally {
        await single.close();
      }
    });

    it('when the rows come back, then their transaction is already committed and the connection is back in the pool', async () => {
      // BEGIN, SET, the statement and COMMIT share one round trip (postgres-pipeline.ts): nothing is left to wait for.
      const single = await createExecutor(base, { hostPolicy: LOOPBACK_POLICY, max: 1 });
      try {
        for (let i = 0; i < 5; i++) {
          const [row] = await single.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [], q);
          // One turn of the event loop and no I/O: a COMMIT still to be sent and answered would keep the connection out.
          await new Promise((resolve) => setImmediate(resolve));
          expect(single.stats()).toMatchObject({ total: 1, idle: 1, waiting: 0 });
          const activity = await admin.query('SELECT state, xact_start FROM pg_stat_activity WHERE pid = $1', [row!.pid]);
          expect(activity.rows[0]).toMatchObject({ state: 'idle', xact_start: null });
        }
      } finally {
        await single.close();
      }
    });

    it('when a query runs, then its transaction carries the statement timeout it was given', async () => {
      await expect(executor.query('SELECT current_setting($1) AS t', ['statement_timeout'], { timeoutMs: 300 })).resolves.toEqual([{ t: '300ms' }]);
      await expect(executor.query("SELECT current_setting('statement_timeout') AS t", [], { timeoutMs: 4000 })).resolves.toEqual([{ t: '4s' }]);
    });

    it('when a statement fails, then the error is the statement\'s and the connection serves the next query', async () => {
      const single = await createExecutor(base, { hostPolicy: LOOPBACK_POLICY, max: 1 });
      try {
        await expect(single.query('SELECT 1 / (0 * $1::int) AS boom', [1], q)).rejects.toMatchObject({ code: 'DATABASE_ERROR' });
        await expect(single.query("SELECT current_setting('transaction_read_only') AS ro", [], q)).resolves.toEqual([{ ro: 'on' }]);
      } finally {
        await single.close();
      }
    });

    it('when parameters are given, then they are bound, never interpolated', async () => {
      const hostile = "'); DROP TABLE users; --";
      await expect(executor.query<{ v: string }>('SELECT $1::text AS v', [hostile], q)).resolves.toEqual([{ v: hostile }]);
    });

    it('when the pool manager is asked twice for one id, then the same executor serves both; close ends the pool', async () => {
      const manager = new PoolManager({ hostPolicy: LOOPBACK_POLICY, max: 3 });
      try {
        const a = await manager.get('db_pg', base);
        const b = await manager.get('db_pg', base);
        expect(a).toBe(b);
        await Promise.all([1, 2, 3, 4].map(() => a.query('SELECT pg_sleep(0.05)', [], q)));
        const stats = manager.stats('db_pg');
        expect(stats).toMatchObject({ open: true, max: 3, waiting: 0 });
        expect(stats?.total).toBeGreaterThan(0);
        expect(stats?.total).toBeLessThanOrEqual(3);
        await manager.close('db_pg');
        expect(manager.stats('db_pg')).toBeNull();
        await expect(a.query('SELECT 1', [], q)).rejects.toMatchObject({ code: 'DATABASE_UNREACHABLE' });
        expect(await manager.get('db_pg', base)).not.toBe(a);
      } finally {
        await manager.closeAll();
      }
    });
  });
});
