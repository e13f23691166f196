/**
 * Stream mode on PostgreSQL: a table's inserts, updates, deletes and truncates reach the index through the
 * connection's logical replication slot; a column added hands the table to a reconcile; a stream stopped (or whose
 * process dies without letting go) is resumed by another reader from the stored position with no change lost, and
 * the changes it receives again write nothing. Each case ends with the index equal to the source row by row. Needs
 * PostgreSQL with wal_level=logical (.ci/run sets it); a missing service fails the test. The slots and publications
 * made here are dropped at the end: a slot left behind keeps WAL on the server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/connectors/executor.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import type { PooledExecutor, TableSchema } from '../../src/connectors/types.js';
import { pageQuery, cursorOf } from '../../src/search-index/documents.js';
import { dropStream, lsnValue, PgChangeStream, prepareStream, slotLagBytes, streamName, type StreamRun } from '../../src/search-index/changes/pg-stream.js';
import { writeRows } from '../../src/search-index/changes/poll-job.js';
import { IndexStore, type IndexSpace } from '../../src/search-index/index-store.js';
import { onPostgres, userPostgresUrl } from '../support/seed-databases.js';
import { LOOPBACK_POLICY, settingsFromUrl, streamEnding, uniqueName } from './connectors-support.js';

let dir: string;
let store: IndexStore;
let executor: PooledExecutor;
let space: IndexSpace;
const made: string[] = [];
const tables: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-stream-'));
  store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
  space = await store.ensureSpace('space_stream');
  executor = await createExecutor(settingsFromUrl('postgres', userPostgresUrl), { hostPolicy: LOOPBACK_POLICY });
});
afterAll(async () => {
  for (const name of made) await dropStream(clientConfig, name);
  // Any slot of these tests left by a failed run before.
  await executor.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'quarry_itb_stream_test_%' AND NOT active", [], { timeoutMs: 10_000 });
  if (tables.length > 0) await onPostgres(tables.map((t) => `DROP TABLE IF EXISTS ${t}`));
  await executor?.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const url = new URL(userPostgresUrl);
const clientConfig = { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) || undefined, database: url.pathname.slice(1) };

/** A table with rows 1..5, read in full into the index (the first sync), and its stream's slot and publication. */
async function setup(label: string): Promise<{ tableName: string; src: string; name: string; schema: () => Promise<TableSchema> }> {
  const tableName = uniqueName(`stream_${label}`);
  tables.push(tableName);
  await onPostgres([
    `CREATE TABLE ${tableName} (id int PRIMARY KEY, title text NOT NULL)`,
    `INSERT INTO ${tableName} SELECT g, 'row ' || g || ' about kettles' FROM generate_series(1, 5) g`,
  ]);
  const src = `itb_${label}`;
  const name = streamName(`itb_stream_test_${label}_${Math.random().toString(36).slice(2, 8)}`);
  made.push(name);
  const schema = async () => (await discoverSchema(executor, { tables: [tableName] })).tables[0]!;
  await fullSync(await schema(), src);
  await prepareStream(clientConfig, name, [await schema()]);
  return { tableName, src, name, schema };
}

/** What a full sync does, in short: every row written by key, the index's rows without a source row dropped. */
async function fullSync(table: TableSchema, src: string): Promise<void> {
  const keep = new Set<string>();
  let after: unknown[] | null = null;
  for (;;) {
    const page = pageQuery(executor, table, after, 100);
    const rows = await executor.query(page.sql, page.params, { timeoutMs: 10_000 });
    if (rows.length === 0) break;
    await writeRows({ src, table, space, provider: null, columns: [] }, rows);
    for (const row of rows) keep.add(JSON.stringify(table.primaryKey.map((c) => row[c])));
    after = cursorOf(table, rows[rows.length - 1]!);
  }
  const gone: string[] = [];
  for await (const batch of space.scanSource(src)) for (const row of batch) if (!keep.has(JSON.stringify(Object.values(JSON.parse(row.pk) as object)))) gone.push(row.rid);
  if (gone.length > 0) await space.deleteRows(gone);
}

function stream(setupOf: { src: string; name: string }, table: TableSchema, fromLsn: string | null, overrides: Partial<StreamRun> = {}) {
  const saved: string[] = [];
  const reconciled: string[] = [];
  const consumer = new PgChangeStream({
    clientConfig, executor, name: setupOf.name, space, fromLsn, flushMs: 50,
    tables: [{ src: setupOf.src, table, columns: [], provider: null }],
    saveLsn: async (lsn) => {
      saved.push(lsn);
      return true;
    },
    reconcile: async (src) => {
      reconciled.push(src);
      const fresh = (await discoverSchema(executor, { tables: [table.name] })).tables[0] ?? null;
      if (fresh) await fullSync(fresh, src);
      return fresh;
    },
    ...overrides,
  });
  consumer.start();
  streamsEnded.set(setupOf.src, streamEnding(consumer.done));
  return { consumer, saved, reconciled };
}

/** Per table (its index source), how its stream ended, if it did: named when a wait fails. */
const streamsEnded = new Map<string, () => string>();

/** The index's rows of the table and the source's, each as the JSON of its fields, in id order. */
async function sides(tableName: string, src: string): Promise<{ index: string[]; source: string[] }> {
  const index: Array<Record<string, unknown>> = [];
  for await (const batch of space.scanSource(src)) {
    for (const row of await space.rows(batch.map((r) => r.rid))) index.push(JSON.parse(row.fields) as Record<string, unknown>);
  }
  const source = await executor.query<Record<string, unknown>>(`SELECT * FROM ${tableName} ORDER BY id`, [], { timeoutMs: 10_000 });
  const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.id) - Number(b.id);
  return { index: index.sort(byId).map((r) => JSON.stringify(r)), source: source.map((r) => JSON.stringify(r)) };
}

/** Waits (no time asserted) until the index equals the source. */
async function converged(tableName: string, src: string): Promise<void> {
  await expect.poll(async () => {
    const both = await sides(tableName, src);
    if (both.index.join('\n') === both.source.join('\n')) return 'equal';
    return `index ${both.index.join(' | ')}\nsource ${both.source.join(' | ')}\nstream ${streamsEnded.get(src)?.() ?? 'not started'}`;
  }, { timeout: 20_000, interval: 100 }).toBe('equal');
}

describe('stream mode on PostgreSQL', () => {
  it('when the role lacks REPLICATION, then the stream is not allowed and the error says the statement to run', async () => {
    const role = `quarry_norepl_${Math.random().toString(36).slice(2, 8)}`;
    await onPostgres([`CREATE ROLE ${role} LOGIN`]);
    try {
      const tableName = uniqueName('stream_denied');
      tables.push(tableName);
      await onPostgres([`CREATE TABLE ${tableName} (id int PRIMARY KEY, title text)`]);
      const table = (await discoverSchema(executor, { tables: [tableName] })).tables[0]!;
      const refused = prepareStream({ ...clientConfig, user: role }, streamName(`itb_stream_test_denied_${role}`), [table]);
      await expect(refused).rejects.toMatchObject({ code: 'STREAM_NOT_ALLOWED', message: expect.stringContaining(`ALTER ROLE "${role}" WITH REPLICATION`) });
    } finally {
      await onPostgres([`DROP ROLE ${role}`]);
    }
  });

  it('when rows are inserted, updated and deleted, then the index follows them and the slot confirms the stored position', async () => {
    const s = await setup('crud');
    const run = stream(s, await s.schema(), null);
    await onPostgres([
      `INSERT INTO ${s.tableName} VALUES (6, 'row 6 about teapots'), (7, 'row 7 about cups')`,
      `UPDATE ${s.tableName} SET title = 'row 2 about samovars' WHERE id = 2`,
      `DELETE FROM ${s.tableName} WHERE id IN (3, 7)`,
    ]);
    await converged(s.tableName, s.src);
    expect((await sides(s.tableName, s.src)).index).toContain(JSON.stringify({ id: 2, title: 'row 2 about samovars' }));
    await expect.poll(() => run.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await run.consumer.stop()).toEqual({ status: 'stopped' });
    // What was stored was confirmed to the server: the slot's position is the stored one.
    const [slot] = await executor.query<{ lsn: string }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [s.name], { timeoutMs: 10_000 });
    expect(lsnValue(slot!.lsn)).toBeGreaterThanOrEqual(lsnValue(run.saved.at(-1)!));
    expect(await slotLagBytes(executor, s.name)).not.toBeNull();
  });

  it('when the table is truncated, then its rows leave the index, and rows inserted after it come in', async () => {
    const s = await setup('truncate');
    const run = stream(s, await s.schema(), null);
    await onPostgres([`TRUNCATE ${s.tableName}`]);
    await converged(s.tableName, s.src);
    expect(await space.countRows(s.src)).toBe(0);
    await onPostgres([`INSERT INTO ${s.tableName} VALUES (9, 'row 9 after the truncate')`]);
    await converged(s.tableName, s.src);
    expect(run.consumer.applied.truncated).toBe(1);
    await run.consumer.stop();
  });

  it('when a column is added, then the table is reconciled and its rows carry the new column', async () => {
    const s = await setup('columns');
    const run = stream(s, await s.schema(), null);
    await onPostgres([
      `ALTER TABLE ${s.tableName} ADD COLUMN colour text NOT NULL DEFAULT 'red'`,
      `UPDATE ${s.tableName} SET colour = 'blue', title = 'row 1 about blue kettles' WHERE id = 1`,
    ]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src]);
    expect((await sides(s.tableName, s.src)).index).toContain(JSON.stringify({ id: 4, title: 'row 4 about kettles', colour: 'red' }));
    // Later changes go on with the new columns, without another reconcile.
    await onPostgres([`UPDATE ${s.tableName} SET colour = 'green' WHERE id = 5`]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toHaveLength(1);
    await run.consumer.stop();
  });

  it('when a row changed before a column is dropped still waits for its batch, then the table is reconciled with the columns of now and the stream goes on', async () => {
    const s = await setup('pending');
    // Batches wait a minute: the change before the drop is still gathered when the drop comes.
    const run = stream(s, await s.schema(), null, { flushMs: 60_000 });
    await onPostgres([`ALTER TABLE ${s.tableName} ADD COLUMN colour text NOT NULL DEFAULT 'red'`, `UPDATE ${s.tableName} SET colour = 'blue' WHERE id = 1`]);
    // The reconcile done (a DDL while it reads would fail its own read, as a full sync's), before the drop.
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src]);
    // The new columns come with the first change after the drop (pgoutput's relation message).
    await onPostgres([
      `UPDATE ${s.tableName} SET title = 'row 3 about teapots' WHERE id = 3`,
      `ALTER TABLE ${s.tableName} DROP COLUMN title`,
      `UPDATE ${s.tableName} SET colour = 'green' WHERE id = 5`,
    ]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src, s.src]);
    // Reading the gathered row by key with the columns of before would have failed the stream (title is gone).
    expect(await run.consumer.stop()).toEqual({ status: 'stopped' });
  });

  it('when a stream is stopped mid-way and Quarry restarts, then the next reader resumes from the stored position and loses no change', async () => {
    const s = await setup('restart');
    const first = stream(s, await s.schema(), null);
    await onPostgres([`INSERT INTO ${s.tableName} VALUES (6, 'row 6 before the restart')`]);
    await converged(s.tableName, s.src);
    await expect.poll(() => first.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await first.consumer.stop();
    // Written while no process reads the slot.
    await onPostgres([
      `INSERT INTO ${s.tableName} VALUES (7, 'row 7 while stopped')`,
      `UPDATE ${s.tableName} SET title = 'row 1 while stopped' WHERE id = 1`,
      `DELETE FROM ${s.tableName} WHERE id = 2`,
    ]);
    const second = stream(s, await s.schema(), first.saved.at(-1)!);
    await converged(s.tableName, s.src);
    expect(second.consumer.applied).toMatchObject({ written: 2, deleted: 1 });
    await second.consumer.stop();
  });

  it('when a reader stores its changes but dies before confirming them, then another reader takes the stream over, receives them again and writes nothing twice', async () => {
    const s = await setup('takeover');
    // The first reader writes the rows and stores the position, then its process is gone: the server never hears
    // the position confirmed, and the slot is let go when the connection drops.
    let first!: ReturnType<typeof stream>;
    first = stream(s, await s.schema(), null, {
      saveLsn: async (lsn) => {
        first.saved.push(lsn);
        if (first.consumer.applied.written === 0) return true;
        void first.consumer.abandon();
        return false;
      },
    });
    await onPostgres([
      `INSERT INTO ${s.tableName} VALUES (6, 'row 6 before the takeover')`,
      `UPDATE ${s.tableName} SET title = 'row 3 before the takeover' WHERE id = 3`,
    ]);
    await converged(s.tableName, s.src);
    expect(await first.consumer.done).toEqual({ status: 'lost' });
    await expect.poll(async () => (await executor.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [s.name], { timeoutMs: 10_000 }))[0]?.active, { timeout: 10_000 }).toBe(false);

    await onPostgres([`DELETE FROM ${s.tableName} WHERE id = 4`, `INSERT INTO ${s.tableName} VALUES (8, 'row 8 after the takeover')`]);
    const second = stream(s, await s.schema(), first.saved.at(-1)!);
    await converged(s.tableName, s.src);
    // Rows 6 and 3 come again from the slot (never confirmed): read, not written; row 8 written, row 4 deleted.
    expect(second.consumer.applied).toMatchObject({ written: 1, deleted: 1 });
    await expect.poll(() => second.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await second.consumer.stop();
  });
});
