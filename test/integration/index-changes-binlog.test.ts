/**
 * Stream mode on MariaDB: a table's inserts, updates and deletes reach the index through the server's row-based
 * binary log; a TRUNCATE and a column added or dropped hand the table to a reconcile; a stream stopped (or whose
 * process dies without letting go) is resumed by another reader from the stored position with no change lost, and
 * the changes it receives again write nothing twice. A stream moved to another server of the topology (a failover)
 * resumes from the stored executed GTIDs. A stored position the server no longer has is reported as lost. Each case ends with the index equal to the source row by row. Needs MariaDB with log_bin and
 * binlog_format=ROW (.ci/run sets them); a missing service fails the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/connectors/executor.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import type { PooledExecutor, TableSchema } from '../../src/connectors/types.js';
import { compareBinlogPositions, type BinlogPosition } from '../../src/search-index/changes/binlog-events.js';
import { BinlogChangeStream, binlogConnectionOptions, prepareBinlog, type BinlogRun } from '../../src/search-index/changes/mysql-binlog.js';
import { writeRows } from '../../src/search-index/changes/poll-job.js';
import { cursorOf, pageQuery } from '../../src/search-index/documents.js';
import { IndexStore, type IndexSpace } from '../../src/search-index/index-store.js';
import { onMysql } from '../support/seed-databases.js';
import { mysqlUrl } from '../support/stores.js';
import { LOOPBACK_POLICY, settingsFromUrl, streamEnding, uniqueName } from './connectors-support.js';

let dir: string;
let store: IndexStore;
let executor: PooledExecutor;
let space: IndexSpace;
const tables: string[] = [];
const url = new URL(mysqlUrl);
const database = url.pathname.slice(1) || 'test';
const clientConfig = { host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), database };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-binlog-'));
  store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
  space = await store.ensureSpace('space_binlog');
  executor = await createExecutor(settingsFromUrl('mysql', mysqlUrl), { hostPolicy: LOOPBACK_POLICY });
});
afterAll(async () => {
  if (tables.length > 0) await onMysql(tables.map((t) => `DROP TABLE IF EXISTS ${t}`));
  await executor?.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A table with rows 1..5 read in full into the index (the first sync), and the log's position from then on. */
async function setup(label: string): Promise<{ tableName: string; src: string; from: BinlogPosition; schema: () => Promise<TableSchema> }> {
  const tableName = uniqueName(`binlog_${label}`);
  tables.push(tableName);
  await onMysql([
    `CREATE TABLE ${tableName} (id int PRIMARY KEY, title varchar(200) NOT NULL)`,
    `INSERT INTO ${tableName} VALUES (1, 'row 1 about kettles'), (2, 'row 2 about kettles'), (3, 'row 3 about kettles'), (4, 'row 4 about kettles'), (5, 'row 5 about kettles')`,
  ]);
  const src = `itb_${label}`;
  const schema = async () => (await discoverSchema(executor, { tables: [tableName] })).tables[0]!;
  const start = await prepareBinlog(await binlogConnectionOptions(clientConfig), null);
  expect(start.fresh).toBe(true);
  await fullSync(await schema(), src);
  return { tableName, src, from: start.from, schema };
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

async function stream(setupOf: { src: string; tableName: string }, table: TableSchema, from: BinlogPosition, overrides: Partial<BinlogRun> = {}) {
  const saved: BinlogPosition[] = [];
  const reconciled: string[] = [];
  const consumer = new BinlogChangeStream({
    connection: await binlogConnectionOptions(clientConfig), executor, schema: database, serverId: 4_000_000 + Math.floor(Math.random() * 1_000_000),
    space, from, flushMs: 50,
    tables: [{ src: setupOf.src, table, columns: [], provider: null }],
    savePosition: async (position) => {
      saved.push(position);
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

/** Per table (its index source), how its stream ended, if it did. */
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

describe('stream mode on MariaDB', () => {
  it('when the user lacks the replication grants, then the stream is not allowed and the error says the statement to run', async () => {
    const user = `quarry_norepl_${Math.random().toString(36).slice(2, 8)}`;
    await onMysql([`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`, `GRANT SELECT ON ${database}.* TO '${user}'@'%'`]);
    try {
      const refused = prepareBinlog(await binlogConnectionOptions({ ...clientConfig, user, password: 'pw' }), null);
      await expect(refused).rejects.toMatchObject({ code: 'STREAM_NOT_ALLOWED', message: expect.stringContaining(`GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${user}'@'%'`) });
    } finally {
      await onMysql([`DROP USER '${user}'@'%'`]);
    }
  });

  it('when rows are inserted, updated and deleted, then the index follows them and the stored position moves past them', async () => {
    const s = await setup('crud');
    const run = await stream(s, await s.schema(), s.from);
    await onMysql([
      `INSERT INTO ${s.tableName} VALUES (6, 'row 6 about teapots'), (7, 'row 7 about cups')`,
      `UPDATE ${s.tableName} SET title = 'row 2 about samovars' WHERE id = 2`,
      `UPDATE ${s.tableName} SET id = 8 WHERE id = 4`,
      `DELETE FROM ${s.tableName} WHERE id IN (3, 7)`,
    ]);
    await converged(s.tableName, s.src);
    expect((await sides(s.tableName, s.src)).index).toContain(JSON.stringify({ id: 2, title: 'row 2 about samovars' }));
    await expect.poll(() => run.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(compareBinlogPositions(run.saved.at(-1)!, s.from)).toBeGreaterThan(0);
    expect(run.saved.at(-1)!.gtid).toMatch(/^\d+-\d+-\d+$/);
    expect(await run.consumer.stop()).toEqual({ status: 'stopped' });
  });

  it('when the table is truncated, then it is reconciled, and rows inserted after it come in', async () => {
    const s = await setup('truncate');
    const run = await stream(s, await s.schema(), s.from);
    await onMysql([`TRUNCATE TABLE ${s.tableName}`]);
    await converged(s.tableName, s.src);
    expect(await space.countRows(s.src)).toBe(0);
    await onMysql([`INSERT INTO ${s.tableName} VALUES (9, 'row 9 after the truncate')`]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src]);
    await run.consumer.stop();
  });

  it('when a column is added and another dropped, then the table is reconciled each time and its rows carry the columns of the moment', async () => {
    const s = await setup('columns');
    const run = await stream(s, await s.schema(), s.from);
    await onMysql([
      `ALTER TABLE ${s.tableName} ADD COLUMN colour varchar(20) NOT NULL DEFAULT 'red'`,
      `UPDATE ${s.tableName} SET colour = 'blue', title = 'row 1 about blue kettles' WHERE id = 1`,
    ]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src]);
    expect((await sides(s.tableName, s.src)).index).toContain(JSON.stringify({ id: 4, title: 'row 4 about kettles', colour: 'red' }));
    await onMysql([`ALTER TABLE ${s.tableName} DROP COLUMN title`, `UPDATE ${s.tableName} SET colour = 'green' WHERE id = 5`]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src, s.src]);
    expect((await sides(s.tableName, s.src)).index).toContain(JSON.stringify({ id: 5, colour: 'green' }));
    await run.consumer.stop();
  });

  it('when a row changed before a column is dropped still waits for its batch, then the table is reconciled with the columns of now and the stream goes on', async () => {
    const s = await setup('pending');
    // Batches wait a minute: the change before the drop is still gathered when the drop comes.
    const run = await stream(s, await s.schema(), s.from, { flushMs: 60_000 });
    await onMysql([`ALTER TABLE ${s.tableName} ADD COLUMN colour varchar(20) NOT NULL DEFAULT 'red'`]);
    // The reconcile done (a DDL while it reads would fail its own read, as a full sync's), before the drop.
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src]);
    await onMysql([`UPDATE ${s.tableName} SET title = 'row 3 about teapots' WHERE id = 3`, `ALTER TABLE ${s.tableName} DROP COLUMN title`]);
    await converged(s.tableName, s.src);
    expect(run.reconciled).toEqual([s.src, s.src]);
    // Reading the gathered row by key with the columns of before would have failed the stream (title is gone).
    expect(await run.consumer.stop()).toEqual({ status: 'stopped' });
  });

  it('when a stream is stopped mid-way and Quarry restarts, then the next reader resumes from the stored position and loses no change', async () => {
    const s = await setup('restart');
    const first = await stream(s, await s.schema(), s.from);
    await onMysql([`INSERT INTO ${s.tableName} VALUES (6, 'row 6 before the restart')`]);
    await converged(s.tableName, s.src);
    await expect.poll(() => first.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await first.consumer.stop();
    // Written while no process reads the log.
    await onMysql([
      `INSERT INTO ${s.tableName} VALUES (7, 'row 7 while stopped')`,
      `UPDATE ${s.tableName} SET title = 'row 1 while stopped' WHERE id = 1`,
      `DELETE FROM ${s.tableName} WHERE id = 2`,
    ]);
    const resumed = await prepareBinlog(await binlogConnectionOptions(clientConfig), first.saved.at(-1)!);
    expect(resumed).toMatchObject({ fresh: false, lost: null, from: first.saved.at(-1)! });
    const second = await stream(s, await s.schema(), resumed.from);
    await converged(s.tableName, s.src);
    expect(second.consumer.applied).toMatchObject({ written: 2, deleted: 1 });
    await second.consumer.stop();
  });

  it('when a reader writes its changes but dies before storing the position, then another reader resumes from the last stored one and writes nothing twice', async () => {
    const s = await setup('takeover');
    let first!: Awaited<ReturnType<typeof stream>>;
    first = await stream(s, await s.schema(), s.from, {
      savePosition: async (position) => {
        first.saved.push(position);
        if (first.consumer.applied.written === 0) return true;
        // The process dies here: its rows are in the index, its position never stored.
        void first.consumer.abandon();
        return false;
      },
    });
    await onMysql([
      `INSERT INTO ${s.tableName} VALUES (6, 'row 6 before the takeover')`,
      `UPDATE ${s.tableName} SET title = 'row 3 before the takeover' WHERE id = 3`,
    ]);
    await converged(s.tableName, s.src);
    expect(await first.consumer.done).toEqual({ status: 'lost' });

    await onMysql([`DELETE FROM ${s.tableName} WHERE id = 4`, `INSERT INTO ${s.tableName} VALUES (8, 'row 8 after the takeover')`]);
    const second = await stream(s, await s.schema(), s.from);
    await converged(s.tableName, s.src);
    // Rows 6 and 3 come again from the log (their position was never stored): read, not written; row 8 written, row 4 deleted.
    expect(second.consumer.applied).toMatchObject({ written: 1, deleted: 1 });
    await expect.poll(() => second.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await second.consumer.stop();
  });

  it('when nothing is written, then the stream, having read to the log\'s end, stores its position again (the lag moves on)', async () => {
    const s = await setup('idle');
    const run = await stream(s, await s.schema(), s.from, { keepaliveMs: 200 });
    await onMysql([`INSERT INTO ${s.tableName} VALUES (6, 'row 6 then quiet')`]);
    await converged(s.tableName, s.src);
    // A batch stores a position once; only the idle check stores the same one again.
    await expect.poll(() => run.saved.some((p, i) => i > 0 && compareBinlogPositions(p, run.saved[i - 1]!) === 0), { timeout: 30_000, interval: 100 }).toBe(true);
    await run.consumer.stop();
  });

  it('when the stream moves to another server of the topology (a failover: other log files and offsets), then it resumes from the stored executed GTIDs and loses no change', async () => {
    const s = await setup('failover');
    // MariaDB always has GTIDs: the start and every stored position carry the executed ones.
    expect(s.from.gtidSet).toMatch(/^\d+-\d+-\d+/);
    const first = await stream(s, await s.schema(), s.from);
    await onMysql([`INSERT INTO ${s.tableName} VALUES (6, 'row 6 before the failover')`]);
    await converged(s.tableName, s.src);
    await expect.poll(() => first.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await first.consumer.stop();
    const last = first.saved.at(-1)!;
    expect(last.gtidSet).toMatch(/^\d+-\d+-\d+/);
    await onMysql([
      `INSERT INTO ${s.tableName} VALUES (7, 'row 7 during the failover')`,
      `UPDATE ${s.tableName} SET title = 'row 1 during the failover' WHERE id = 1`,
      `DELETE FROM ${s.tableName} WHERE id = 2`,
    ]);
    // The new primary's logs have names and offsets of their own: the stored file is not on it.
    const stored: BinlogPosition = { ...last, file: 'replica-bin.000042', position: 4 };
    const resumed = await prepareBinlog(await binlogConnectionOptions(clientConfig), stored);
    expect(resumed).toMatchObject({ fresh: false, lost: null, from: stored });
    const second = await stream(s, await s.schema(), resumed.from);
    await converged(s.tableName, s.src);
    // Only the changes after the stored GTIDs come: nothing re-read in full, row 6 not written again.
    expect(second.consumer.applied).toMatchObject({ written: 2, deleted: 1 });
    expect(second.reconciled).toEqual([]);
    // The positions it stores are this server's, with its executed GTIDs.
    await expect.poll(() => second.saved.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(second.saved.at(-1)!.file).not.toBe('replica-bin.000042');
    expect(second.saved.at(-1)!.gtidSet).toMatch(/^\d+-\d+-\d+/);
    await second.consumer.stop();
  });

  it('when the stored executed GTIDs are not in the server\'s logs (purged, or another topology), then the stream ends with its position lost', async () => {
    const s = await setup('gtid_lost');
    const run = await stream(s, await s.schema(), { ...s.from, gtidSet: '0-999-99999' });
    const end = await run.consumer.done;
    expect(end.status).toBe('failed');
    expect(end.status === 'failed' && end.error).toMatchObject({ code: 'STREAM_POSITION_LOST' });
    expect(run.saved).toEqual([]);
  });

  it('when the stored position names a log file the server no longer has, then the start says it is lost and begins at the current end', async () => {
    const stored: BinlogPosition = { file: 'mysql-bin.000000', position: 4, gtid: null };
    const start = await prepareBinlog(await binlogConnectionOptions(clientConfig), stored);
    expect(start).toMatchObject({ fresh: false, lost: stored });
    expect(compareBinlogPositions(start.from, stored)).toBeGreaterThan(0);
  });
});
