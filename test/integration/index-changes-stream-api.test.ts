/**
 * Stream mode end to end: updateIndexedTable `{"mode": "stream"}` on a PostgreSQL connection makes the
 * connection's publication and slot (`quarry_<id>`), the changes reach the index, the index endpoint says mode
 * `stream` with the slot's retained bytes; a process that dies holding the stream loses it to another, which
 * resumes from the stored position; turning stream mode off drops the slot and the publication. Stream mode on a
 * SQLite connection is 400. Needs PostgreSQL (wal_level=logical); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { indexTableRepository } from '../../src/repositories/index-table-repository.js';
import { streamName } from '../../src/search-index/changes/pg-stream.js';
import { ChangeStreamer } from '../../src/search-index/changes/streamer.js';
import { spaceName } from '../../src/search-index/index-store.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onSqlite, postgresConnection, userPostgresUrl } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let owner: TestUser;
let source: pg.Client;
const table = `strm_${randomBytes(4).toString('hex')}`;
let db: string;
let src: string;
const as = () => ({ token: owner.token });
const tablePath = () => `/api/v1/databases/${db}/index/tables/${table}`;

beforeAll(async () => {
  t = await startTestServer({ INDEX_SYNC_STALE_MS: '3000' });
  owner = await registerUser(t.client);
  source = new pg.Client({ connectionString: userPostgresUrl });
  await source.connect();
  await source.query(`CREATE TABLE ${table} (id int PRIMARY KEY, title text NOT NULL)`);
  await source.query(`INSERT INTO ${table} VALUES (1, 'Copper kettle'), (2, 'Cast iron pan'), (3, 'Chef knife')`);
  const res = await t.client.post('/api/v1/databases', postgresConnection({ name: 'Streamed catalog', tables: [table] }), as());
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  db = res.body.data.database.id;
  await waitForIndex(t.client, owner.token, db);
  src = (await indexTableRepository.find(db, table))!.id;
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
  // A slot left behind keeps WAL on this shared server.
  await source?.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", [streamName(db ?? 'none')]).catch(() => undefined);
  await source?.query(`DROP PUBLICATION IF EXISTS ${streamName(db ?? 'none')}`).catch(() => undefined);
  await source?.query(`DROP TABLE IF EXISTS ${table}`);
  await source?.end();
});

async function sides(): Promise<{ index: string[]; source: string[] }> {
  const space = await t.server.services.searchIndex.store.space(spaceName(owner.id, 'test'));
  const index: string[] = [];
  for await (const batch of space!.scanSource(src)) {
    for (const row of await space!.rows(batch.map((r) => r.rid))) {
      const fields = JSON.parse(row.fields) as { id: number; title: string };
      index.push(`${fields.id}:${fields.title}`);
    }
  }
  const rows = (await source.query(`SELECT id, title FROM ${table} ORDER BY id`)).rows as Array<{ id: number; title: string }>;
  return { index: index.sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0])), source: rows.map((r) => `${r.id}:${r.title}`) };
}

async function converged(): Promise<void> {
  await expect.poll(async () => {
    const both = await sides();
    return both.index.join(' | ') === both.source.join(' | ') ? 'equal' : `index ${both.index.join(' | ')} / source ${both.source.join(' | ')}`;
  }, { timeout: 60_000, interval: 200 }).toBe('equal');
}

const slotExists = async () => (await source.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [streamName(db)])).rowCount === 1;

describe('stream mode', () => {
  it('when stream mode is asked of a SQLite connection, then updateIndexedTable answers 400 naming why', async () => {
    await onSqlite(join(t.dataDir, 'sqlite', owner.id), 'notes.db', ['CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT)', "INSERT INTO notes (title) VALUES ('kettle')"]);
    const res = await t.client.post('/api/v1/databases', { name: 'Not streamable', engine: 'sqlite', database: 'notes.db', environment: 'test' }, as());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const tables = await t.client.get(`/api/v1/databases/${res.body.data.database.id}/index`, as());
    const name = tables.body.data.tables[0].table as string;
    const refused = await t.client.patch(`/api/v1/databases/${res.body.data.database.id}/index/tables/${name}`, { mode: 'stream' }, as());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { errors: [{ location: 'body', path: '/mode' }] } });
    expect(refused.body.error.message).toContain('this SQLite connection');
    const noColumn = await t.client.patch(`/api/v1/databases/${res.body.data.database.id}/index/tables/${name}`, { mode: 'poll' }, as());
    expect(noColumn.status).toBe(400);
    expect(noColumn.body.error.message).toContain('needs a change column');
  });

  it('when stream mode is on, then inserts, updates and deletes reach the index and the index endpoint says mode stream with the slot\'s bytes', async () => {
    const on = await t.client.patch(tablePath(), { mode: 'stream' }, as());
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.data).toMatchObject({ mode: 'stream', lastError: null });
    await expect.poll(async () => (await indexTableRepository.find(db, table))!.changeCursor, { timeout: 60_000, interval: 200 }).not.toBeNull();
    expect(await slotExists()).toBe(true);

    await source.query(`INSERT INTO ${table} VALUES (4, 'Espresso machine')`);
    await source.query(`UPDATE ${table} SET title = 'Copper kettle, polished' WHERE id = 1`);
    await source.query(`DELETE FROM ${table} WHERE id = 3`);
    await converged();
    const view = (await t.client.get(`/api/v1/databases/${db}/index`, as())).body.data.tables.find((x: { table: string }) => x.table === table);
    expect(view).toMatchObject({ mode: 'stream', lastError: null, lagBytes: expect.any(Number) });
    // The full sync queued when the slot was made (it reads what came before the slot) is over.
    await waitForIndex(t.client, owner.token, db);
    await converged();
  }, 120_000);

  it('when the process holding the stream dies, then another takes it over from the stored position and loses no change', async () => {
    const first = t.server.services.searchIndex.streamer;
    await first.abandon();
    const held = (await indexTableRepository.find(db, table))!;
    expect(held.pollOwner).toBe(first.owner);
    await source.query(`INSERT INTO ${table} VALUES (5, 'Tea kettle')`);
    await source.query(`UPDATE ${table} SET title = 'Cast iron pan, seasoned' WHERE id = 2`);
    // No reader while the holder is dead: the changes wait in the slot.
    expect((await sides()).index).not.toContain('5:Tea kettle');

    const services = t.server.services;
    const second = new ChangeStreamer({
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
    });
    second.start();
    try {
      await converged();
      // Taken over once the first holder's heartbeat is stale; then the changes made meanwhile come from the slot.
      await expect.poll(() => second.streaming(), { timeout: 60_000, interval: 100 }).toEqual([db]);
      expect((await indexTableRepository.find(db, table))!.pollOwner).toBe(second.owner);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('when stream mode is turned off, then the slot and the publication are dropped', async () => {
    const off = await t.client.patch(tablePath(), { mode: 'snapshot' }, as());
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data).toMatchObject({ mode: 'snapshot', lagBytes: null, lastError: null });
    expect(await slotExists()).toBe(false);
    expect((await source.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [streamName(db)])).rowCount).toBe(0);
  }, 60_000);
});
