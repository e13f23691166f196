/**
 * Stream mode on MariaDB end to end: updateIndexedTable `{"mode": "stream"}` on a MariaDB connection makes the
 * changes reach the index through the server's binary log, and the index endpoint shows the stored binlog position;
 * a process that dies holding the stream loses it to another, and a restarted one resumes, each from the stored
 * position with no change lost; a stored position the server no longer has is shown as lost and the table re-read;
 * a user without the replication grants gets a clear error and poll mode stays available. Needs MariaDB with a
 * row-based binary log (.ci/run sets it); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { indexTableRepository } from '../../src/repositories/index-table-repository.js';
import { ChangeStreamer } from '../../src/search-index/changes/streamer.js';
import { spaceName } from '../../src/search-index/index-store.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { mysqlConnection } from '../support/seed-databases.js';
import { mysqlUrl } from '../support/stores.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let owner: TestUser;
let source: mysql.Connection;
const table = `bstrm_${randomBytes(4).toString('hex')}`;
const user = `quarry_nobin_${randomBytes(3).toString('hex')}`;
let db: string;
let src: string;
const as = () => ({ token: owner.token });
/** Two tables of one more connection: the first streams, the second joins its stream later. */
const joining = [`bjoin_${randomBytes(4).toString('hex')}`, `bjoin_${randomBytes(4).toString('hex')}`] as const;
const tablePath = () => `/api/v1/databases/${db}/index/tables/${table}`;

beforeAll(async () => {
  t = await startTestServer({ INDEX_SYNC_STALE_MS: '3000' });
  owner = await registerUser(t.client);
  source = await mysql.createConnection({ uri: mysqlUrl });
  await source.query(`CREATE TABLE ${table} (id int PRIMARY KEY, title varchar(200) NOT NULL, updated_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`);
  await source.query(`INSERT INTO ${table} (id, title) VALUES (1, 'Copper kettle'), (2, 'Cast iron pan'), (3, 'Chef knife')`);
  const res = await t.client.post('/api/v1/databases', mysqlConnection({ name: 'Streamed orders', tables: [table] }), as());
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  db = res.body.data.database.id;
  await waitForIndex(t.client, owner.token, db);
  src = (await indexTableRepository.find(db, table))!.id;
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
  await source?.query(`DROP TABLE IF EXISTS ${table}`);
  for (const joined of joining) await source?.query(`DROP TABLE IF EXISTS ${joined}`);
  await source?.query(`DROP USER IF EXISTS '${user}'@'%'`);
  await source?.end();
});

async function sides(of = { table, src: () => src }): Promise<{ index: string[]; source: string[] }> {
  const space = await t.server.services.searchIndex.store.space(spaceName(owner.id, 'test'));
  const index: string[] = [];
  for await (const batch of space!.scanSource(of.src())) {
    for (const row of await space!.rows(batch.map((r) => r.rid))) {
      const fields = JSON.parse(row.fields) as { id: number; title: string };
      index.push(`${fields.id}:${fields.title}`);
    }
  }
  const [rows] = await source.query(`SELECT id, title FROM ${of.table} ORDER BY id`);
  return { index: index.sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0])), source: (rows as Array<{ id: number; title: string }>).map((r) => `${r.id}:${r.title}`) };
}

async function converged(of?: { table: string; src: () => string }): Promise<void> {
  await expect.poll(async () => {
    const both = await sides(of);
    return both.index.join(' | ') === both.source.join(' | ') ? 'equal' : `index ${both.index.join(' | ')} / source ${both.source.join(' | ')}`;
  }, { timeout: 60_000, interval: 200 }).toBe('equal');
}

/** Another Quarry process's streamer over the same store. */
function anotherStreamer(): ChangeStreamer {
  const services = t.server.services;
  return new ChangeStreamer({
    tables: indexTableRepository,
    store: services.searchIndex.store,
    provider: services.embeddings,
    findConnection: (id) => databaseConnectionRepository.findById(id),
    catalog: { tables: (record, fresh) => services.databases.tablesOf(record, fresh) },
    replicationConfigFor: (record) => services.databases.replicationConfigFor(record),
    executorFor: (record) => services.databases.executorFor(record),
    reconcile: (record, name) => services.searchIndex.queue.reconcile(record, name),
    onApplied: () => undefined,
    logger: { warn: () => undefined, error: () => undefined },
    staleMs: 3000,
    tickMs: 200,
    retryMs: 500,
  });
}

const view = async () => (await t.client.get(`/api/v1/databases/${db}/index`, as())).body.data.tables.find((x: { table: string }) => x.table === table);

describe('stream mode on MariaDB', () => {
  it('when stream mode is on, then inserts, updates and deletes reach the index and the index endpoint shows the binlog position', async () => {
    const on = await t.client.patch(tablePath(), { mode: 'stream' }, as());
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.data).toMatchObject({ mode: 'stream', lastError: null });
    await expect.poll(async () => (await indexTableRepository.find(db, table))!.changeCursor, { timeout: 60_000, interval: 200 }).not.toBeNull();

    await source.query(`INSERT INTO ${table} (id, title) VALUES (4, 'Espresso machine')`);
    await source.query(`UPDATE ${table} SET title = 'Copper kettle, polished' WHERE id = 1`);
    await source.query(`DELETE FROM ${table} WHERE id = 3`);
    await converged();
    // lagBytes: the binary log the server wrote after that position (other tests' writes included, so only its kind).
    expect(await view()).toMatchObject({ mode: 'stream', lastError: null, lagBytes: expect.any(Number), binlogPosition: { file: expect.stringMatching(/\.\d+$/), position: expect.any(Number), gtid: expect.stringMatching(/^\d+-\d+-\d+$/) } });
    // The full sync queued when the stream first started (it reads what came before) is over.
    await waitForIndex(t.client, owner.token, db);
    await converged();
  }, 120_000);

  it('when the process holding the stream dies, then another takes it over from the stored position and loses no change', async () => {
    const first = t.server.services.searchIndex.streamer;
    await first.abandon();
    expect((await indexTableRepository.find(db, table))!.pollOwner).toBe(first.owner);
    await source.query(`INSERT INTO ${table} (id, title) VALUES (5, 'Tea kettle')`);
    await source.query(`UPDATE ${table} SET title = 'Cast iron pan, seasoned' WHERE id = 2`);
    // No reader while the holder is dead: the changes wait in the log.
    expect((await sides()).index).not.toContain('5:Tea kettle');

    const second = anotherStreamer();
    second.start();
    try {
      await converged();
      await expect.poll(() => second.streaming(), { timeout: 60_000, interval: 100 }).toEqual([db]);
      expect((await indexTableRepository.find(db, table))!.pollOwner).toBe(second.owner);
      // A restart: this process stops (handing the stream back), changes come meanwhile, the next one resumes.
      await second.stop();
      await source.query(`INSERT INTO ${table} (id, title) VALUES (6, 'Milk frother')`);
      await source.query(`DELETE FROM ${table} WHERE id = 4`);
      const third = anotherStreamer();
      third.start();
      try {
        await converged();
      } finally {
        await third.stop();
      }
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('when the stored position is gone from the server, then the endpoint says so and the table is re-read in full', async () => {
    const entry = (await indexTableRepository.find(db, table))!;
    await indexTableRepository.update(entry.id, { changeCursor: JSON.stringify({ file: 'mysql-bin.000000', position: 4, gtid: null }), pollOwner: null, pollHeartbeatAt: null });
    await source.query(`UPDATE ${table} SET title = 'Tea kettle, whistling' WHERE id = 5`);
    const next = anotherStreamer();
    next.start();
    try {
      await expect.poll(async () => (await view()).lastError?.code, { timeout: 60_000, interval: 200 }).toBe('STREAM_POSITION_LOST');
      expect((await view()).lastError.message).toContain('mysql-bin.000000:4');
      await converged();
      expect((await view()).binlogPosition.file).not.toBe('mysql-bin.000000');
    } finally {
      await next.stop();
    }
  }, 120_000);

  it('when a second table of a streamed connection turns stream mode on, then what it held before is read in full and its changes stream too', async () => {
    const [first, second] = joining;
    for (const name of joining) {
      await source.query(`CREATE TABLE ${name} (id int PRIMARY KEY, title varchar(200) NOT NULL)`);
      await source.query(`INSERT INTO ${name} (id, title) VALUES (1, 'Linen apron'), (2, 'Oak board')`);
    }
    const res = await t.client.post('/api/v1/databases', mysqlConnection({ name: 'Joining tables', tables: [...joining] }), as());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const other = res.body.data.database.id as string;
    await waitForIndex(t.client, owner.token, other);
    const path = (name: string) => `/api/v1/databases/${other}/index/tables/${name}`;
    const entryOf = async (name: string) => (await indexTableRepository.find(other, name))!;
    const srcOf = (id: string) => () => id;
    const streamer = anotherStreamer();
    streamer.start();
    try {
      expect((await t.client.patch(path(first), { mode: 'stream' }, as())).status).toBe(200);
      await expect.poll(async () => (await entryOf(first)).changeCursor, { timeout: 60_000, interval: 200 }).not.toBeNull();
      await source.query(`INSERT INTO ${first} (id, title) VALUES (3, 'Bread knife')`);
      // Written while the second table follows full syncs only: its stream must not start past these rows unread.
      await source.query(`INSERT INTO ${second} (id, title) VALUES (3, 'Wool blanket')`);
      await source.query(`UPDATE ${second} SET title = 'Oak board, oiled' WHERE id = 2`);
      // A later change of the first table: once it is in, the stored position is past the second table's rows.
      const before = (await entryOf(first)).changeCursor;
      await source.query(`UPDATE ${first} SET title = 'Bread knife, serrated' WHERE id = 3`);
      await converged({ table: first, src: srcOf((await entryOf(first)).id) });
      await expect.poll(async () => (await entryOf(first)).changeCursor, { timeout: 60_000, interval: 200 }).not.toBe(before);

      const joined = await t.client.patch(path(second), { mode: 'stream' }, as());
      expect(joined.status, JSON.stringify(joined.body)).toBe(200);
      await expect.poll(async () => (await entryOf(second)).changeCursor, { timeout: 60_000, interval: 200 }).not.toBeNull();
      const secondSrc = srcOf((await entryOf(second)).id);
      await converged({ table: second, src: secondSrc });
      await source.query(`INSERT INTO ${second} (id, title) VALUES (4, 'Cotton towel')`);
      await source.query(`DELETE FROM ${second} WHERE id = 1`);
      await source.query(`INSERT INTO ${first} (id, title) VALUES (4, 'Paring knife')`);
      await converged({ table: second, src: secondSrc });
      await converged({ table: first, src: srcOf((await entryOf(first)).id) });
      const tables = (await t.client.get(`/api/v1/databases/${other}/index`, as())).body.data.tables as Array<{ table: string; mode: string; lastError: unknown }>;
      expect(tables.filter((x) => joining.includes(x.table as never)).map((x) => [x.mode, x.lastError])).toEqual([['stream', null], ['stream', null]]);
    } finally {
      await streamer.stop();
    }
  }, 180_000);

  it('when stream mode is turned off, then the table shows no binlog position', async () => {
    const off = await t.client.patch(tablePath(), { mode: 'snapshot' }, as());
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data).toMatchObject({ mode: 'snapshot', binlogPosition: null, lastError: null });
  }, 60_000);

  it('when the user may not read the binary log, then the table says what to grant and poll mode stays available', async () => {
    await source.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
    await source.query(`GRANT SELECT ON ${new URL(mysqlUrl).pathname.slice(1) || 'test'}.* TO '${user}'@'%'`);
    const res = await t.client.post('/api/v1/databases', mysqlConnection({ name: 'No grants', tables: [table], username: user, password: 'pw' }), as());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const other = res.body.data.database.id as string;
    await waitForIndex(t.client, owner.token, other);
    const path = `/api/v1/databases/${other}/index/tables/${table}`;
    expect((await t.client.patch(path, { mode: 'stream' }, as())).status).toBe(200);
    const streamer = anotherStreamer();
    streamer.start();
    try {
      await expect.poll(async () => (await t.client.get(path, as())).body.data.lastError?.code, { timeout: 60_000, interval: 200 }).toBe('STREAM_NOT_ALLOWED');
      expect((await t.client.get(path, as())).body.data.lastError.message).toContain(`GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${user}'@'%'`);
    } finally {
      await streamer.stop();
    }
    const poll = await t.client.patch(path, { mode: 'poll', changeColumn: 'updated_at' }, as());
    expect(poll.status, JSON.stringify(poll.body)).toBe(200);
    expect(poll.body.data).toMatchObject({ mode: 'poll', changeColumn: 'updated_at', binlogPosition: null, lastError: null });
  }, 120_000);
});
