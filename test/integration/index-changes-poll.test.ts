/**
 * Poll mode end to end on PostgreSQL and MariaDB: a table given a change column through updateIndexedTable is
 * followed between full syncs. Inserts, updates, deletes, a truncate and a column added then dropped at the source
 * all reach the index, which each time ends equal to the source row by row (each row once); the index views say
 * the mode, the lag and the last error; a search says how fresh each database's answer is; a column that cannot
 * order changes is refused. Needs PostgreSQL and MariaDB; a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { indexTableRepository } from '../../src/repositories/index-table-repository.js';
import { spaceName } from '../../src/search-index/index-store.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { mysqlConnection, postgresConnection, userPostgresUrl } from '../support/seed-databases.js';
import { mysqlUrl } from '../support/stores.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let owner: TestUser;
let key: TestKey;

const as = () => ({ token: owner.token });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waiting for a poll (every second here) on a shared machine: generous, and never a measured time. */
const WAIT_MS = 60_000;

interface Source {
  engine: 'postgres' | 'mysql';
  /** Runs statements on the source; returns the last one's rows. */
  run(statements: string[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
  create(table: string): string[];
  /** An update that moves the change column on. */
  touch(table: string, set: string, where: string): string;
}

async function postgresSource(): Promise<Source> {
  const client = new pg.Client({ connectionString: userPostgresUrl });
  await client.connect();
  return {
    engine: 'postgres',
    async run(statements) {
      let rows: Record<string, unknown>[] = [];
      for (const sql of statements) rows = (await client.query(sql)).rows;
      return rows;
    },
    close: () => client.end(),
    create: (table) => [`CREATE TABLE ${table} (id int PRIMARY KEY, title text NOT NULL, body text, photo bytea, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`],
    touch: (table, set, where) => `UPDATE ${table} SET ${set}, updated_at = clock_timestamp() WHERE ${where}`,
  };
}

async function mariadbSource(): Promise<Source> {
  const connection = await mysql.createConnection({ uri: mysqlUrl });
  return {
    engine: 'mysql',
    async run(statements) {
      let rows: Record<string, unknown>[] = [];
      for (const sql of statements) {
        const [result] = await connection.query(sql);
        rows = Array.isArray(result) ? (result as Record<string, unknown>[]) : [];
      }
      return rows;
    },
    close: () => connection.end(),
    create: (table) => [`CREATE TABLE ${table} (id int PRIMARY KEY, title varchar(200) NOT NULL, body text, photo blob, updated_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`],
    touch: (table, set, where) => `UPDATE ${table} SET ${set} WHERE ${where}`,
  };
}

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  key = await createKey(t.client, owner);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe.each([
  ['PostgreSQL', postgresSource, postgresConnection],
  ['MariaDB', mariadbSource, mysqlConnection],
] as const)('poll mode on %s', (engineName, openSource, connection) => {
  const table = `chg_${randomBytes(4).toString('hex')}`;
  let source: Source;
  let db: string;
  let src: string;
  const tablePath = () => `/api/v1/databases/${db}/index/tables/${table}`;

  /** The source's rows and the index's, each as its columns but the change column (written as each engine does). */
  async function bothSides(): Promise<{ source: string[]; index: string[] }> {
    const rows = await source.run([`SELECT * FROM ${table} ORDER BY id`]);
    const columns = Object.keys(rows[0] ?? {}).filter((c) => c !== 'updated_at' && c !== 'photo');
    const sourceRows = rows.map((row) => JSON.stringify(columns.map((c) => (row[c] === null ? null : String(row[c])))));
    const space = await t.server.services.searchIndex.store.space(spaceName(owner.id, 'test'));
    const indexRows: string[] = [];
    for await (const batch of space!.scanSource(src)) {
      for (const row of await space!.rows(batch.map((r) => r.rid))) {
        const fields = JSON.parse(row.fields) as Record<string, unknown>;
        indexRows.push(JSON.stringify((columns.length > 0 ? columns : Object.keys(fields).filter((c) => c !== 'updated_at' && c !== 'photo')).map((c) => (fields[c] === null || fields[c] === undefined ? null : String(fields[c])))));
      }
    }
    const id = (row: string) => Number((JSON.parse(row) as string[])[0]);
    return { source: sourceRows, index: indexRows.sort((a, b) => id(a) - id(b)) };
  }

  /** Waits until the index holds exactly the source's rows (each once), or fails showing both sides. */
  async function converged(what: string): Promise<string[]> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const sides = await bothSides();
      if (JSON.stringify(sides.source) === JSON.stringify(sides.index)) return sides.index;
      if (Date.now() > deadline) expect(sides.index, `${what}: the index is not the source`).toEqual(sides.source);
      await pause(200);
    }
  }

  beforeAll(async () => {
    source = await openSource();
    await source.run([...source.create(table), `INSERT INTO ${table} (id, title, body) VALUES (1, 'Copper kettle', 'boils fast'), (2, 'Cast iron pan', 'heavy'), (3, 'Chef knife', 'sharp')`]);
    const res = await t.client.post('/api/v1/databases', connection({ name: `${engineName} changes`, tables: [table] }), as());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    db = res.body.data.database.id;
    await waitForIndex(t.client, owner.token, db);
    src = (await indexTableRepository.find(db, table))!.id;
  }, 120_000);
  afterAll(async () => {
    await source?.run([`DROP TABLE IF EXISTS ${table}`]);
    await source?.close();
  });

  it('when the change column is unknown or cannot order changes, then updateIndexedTable answers 400 and nothing changes', async () => {
    const unknown = await t.client.patch(tablePath(), { changeColumn: 'changed_on' }, as());
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { errors: [{ location: 'body', path: '/changeColumn' }] } });
    expect(unknown.body.error.message).toContain('not a column of the table');
    for (const column of ['title', 'photo']) {
      const unordered = await t.client.patch(tablePath(), { changeColumn: column }, as());
      expect(unordered.status, column).toBe(400);
      expect(unordered.body.error.message).toContain('not a number or date column');
    }
    const view = await t.client.get(tablePath(), as());
    expect(view.body.data).toMatchObject({ mode: 'snapshot', changeColumn: null, pollIntervalSeconds: null, lastError: null });
  });

  it('when poll mode is on, then inserts, updates and deletes reach the index, each row once', async () => {
    const on = await t.client.patch(tablePath(), { changeColumn: 'updated_at', pollIntervalSeconds: 1 }, as());
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.data).toMatchObject({ mode: 'poll', changeColumn: 'updated_at', pollIntervalSeconds: 1, lastError: null });

    await source.run([`INSERT INTO ${table} (id, title, body) VALUES (4, 'Espresso machine', 'steam wand'), (5, 'Tea kettle', 'whistles')`]);
    expect(await converged('after inserts')).toHaveLength(5);
    await source.run([source.touch(table, "title = 'Copper kettle, polished'", 'id = 1'), source.touch(table, "body = 'seasoned'", 'id IN (2, 4)')]);
    await converged('after updates');
    await source.run([`DELETE FROM ${table} WHERE id IN (3, 5)`]);
    expect(await converged('after deletes')).toHaveLength(3);

    const stored = (await indexTableRepository.find(db, table))!;
    expect(stored.changeCursor).not.toBeNull();
    const index = await t.client.get(`/api/v1/databases/${db}/index`, as());
    const entry = index.body.data.tables.find((x: { table: string }) => x.table === table);
    expect(entry).toMatchObject({ state: 'ready', mode: 'poll', lastError: null });
    expect(entry.lagSeconds).toEqual(expect.any(Number));

    const found = await t.client.post('/api/v1/search', { query: 'polished copper kettle', databases: [db] }, { token: key.secret });
    expect(found.status).toBe(200);
    expect(found.body.data.results.map((r: { fields: { title: string } }) => r.fields.title)).toContain('Copper kettle, polished');
    const status = found.body.data.databases.find((d: { databaseId: string }) => d.databaseId === db);
    expect(status).toMatchObject({ source: 'index', lagSeconds: expect.any(Number) });
    expect(Date.parse(status.indexedAt)).toBeGreaterThanOrEqual(stored.changesAsOf!.getTime());
  }, 120_000);

  it('when the table is truncated, then the index ends empty', async () => {
    await source.run([`TRUNCATE TABLE ${table}`]);
    expect(await converged('after a truncate')).toEqual([]);
    await source.run([`INSERT INTO ${table} (id, title, body) VALUES (10, 'Bread knife', 'serrated'), (11, 'Stock pot', 'twenty litres')`]);
    expect(await converged('after inserts into the emptied table')).toHaveLength(2);
  }, 120_000);

  it('when a column is added and then dropped, then every row is written again with the table\'s columns', async () => {
    await source.run([`ALTER TABLE ${table} ADD COLUMN colour varchar(20) DEFAULT 'red'`]);
    const added = await converged('after a column was added');
    expect(added.every((row) => row.includes('"red"'))).toBe(true);
    await source.run([source.touch(table, "colour = 'blue'", 'id = 10')]);
    expect((await converged('after an update of the new column')).some((row) => row.includes('"blue"'))).toBe(true);
    await source.run([`ALTER TABLE ${table} DROP COLUMN colour`]);
    const dropped = await converged('after the column was dropped');
    expect(dropped.some((row) => row.includes('red') || row.includes('blue'))).toBe(false);
    await source.run([`INSERT INTO ${table} (id, title, body) VALUES (12, 'Ladle', 'stainless')`]);
    expect(await converged('after an insert once the columns settled')).toHaveLength(3);
    expect((await t.client.get(tablePath(), as())).body.data).toMatchObject({ mode: 'poll', lastError: null });
  }, 180_000);

  it('when two processes claim one poll, then one gets it; when its holder dies, another takes it over from the stored cursor', async () => {
    const poller = t.server.services.searchIndex.poller;
    await poller.stop(); // this process's poller out of the way: the claims below are the only ones
    try {
      const seen = (await indexTableRepository.find(db, table))!;
      const claims = await Promise.all([indexTableRepository.claimPoll(seen, 'poll_a', new Date()), indexTableRepository.claimPoll(seen, 'poll_b', new Date())]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      // The winner dies mid-poll: its heartbeat stops, the cursor it saved stays.
      const cursor = (await indexTableRepository.find(db, table))!.changeCursor;
      await indexTableRepository.update(seen.id, { pollHeartbeatAt: new Date(Date.now() - 3_600_000), nextPollAt: new Date(Date.now() - 1000) });
      await source.run([`INSERT INTO ${table} (id, title, body) VALUES (13, 'Whisk', 'balloon')`]);
      expect((await indexTableRepository.find(db, table))!.changeCursor).toBe(cursor);
    } finally {
      poller.start();
    }
    expect(await converged('after the takeover')).toHaveLength(4);
    const after = (await indexTableRepository.find(db, table))!;
    expect(after.pollOwner === null || after.pollOwner === poller.owner).toBe(true);
  }, 120_000);

  it('when the change column itself is dropped, then poll mode ends and says why', async () => {
    await source.run([`ALTER TABLE ${table} DROP COLUMN updated_at`]);
    const deadline = Date.now() + WAIT_MS;
    let view: { mode: string; changeColumn: string | null; lastError: { code: string } | null };
    do {
      await pause(200);
      view = (await t.client.get(tablePath(), as())).body.data;
    } while (view.mode === 'poll' && Date.now() < deadline);
    expect(view).toMatchObject({ mode: 'snapshot', changeColumn: null, lastError: { code: 'CHANGE_COLUMN_GONE' } });
    await waitForIndex(t.client, owner.token, db);
    await converged('after the reconcile');
  }, 120_000);
});
