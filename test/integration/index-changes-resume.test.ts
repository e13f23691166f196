/**
 * A poll stopped mid-way (its process stopped or died after a page) is resumed from its stored cursor, on
 * PostgreSQL and MariaDB: the second run reads from the cursor on, not from the start, writes only what the first
 * did not, and the index ends equal to the source with no change lost or written twice. Rows that share a change
 * value (one statement's timestamp) are read again at the boundary and skipped by their content hash. Needs
 * PostgreSQL and MariaDB; a missing service fails the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/connectors/executor.js';
import { discoverSchema } from '../../src/connectors/schema-discovery.js';
import type { PooledExecutor, TableSchema } from '../../src/connectors/types.js';
import { BOUNDARY_REREAD_MS, parseCursor, runPoll, type PollRun } from '../../src/search-index/changes/poll-job.js';
import { IndexStore, type IndexSpace } from '../../src/search-index/index-store.js';
import { onMysql, onPostgres } from '../support/seed-databases.js';
import { LOOPBACK_POLICY, settingsFromUrl, uniqueName } from './connectors-support.js';

const PG_URL = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

let dir: string;
let store: IndexStore;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-poll-resume-'));
  store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['PostgreSQL', 'postgres', PG_URL, onPostgres, 'timestamptz NOT NULL DEFAULT now()'],
  ['MariaDB', 'mysql', MYSQL_URL, onMysql, 'datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)'],
] as const)('a poll on %s', (_name, engine, url, run, timestampType) => {
  const tableName = uniqueName('poll_resume');
  let executor: PooledExecutor;
  let table: TableSchema;
  let space: IndexSpace;

  beforeAll(async () => {
    await run([`CREATE TABLE ${tableName} (id int PRIMARY KEY, title varchar(200) NOT NULL, version bigint NOT NULL, stamped ${timestampType})`]);
    // Twenty rows written by one statement: one version each, but one timestamp for all.
    await run([`INSERT INTO ${tableName} (id, title, version) VALUES ${Array.from({ length: 20 }, (_, i) => `(${i + 1}, 'row ${i + 1} about kettles', ${i + 1})`).join(', ')}`]);
    executor = await createExecutor(settingsFromUrl(engine, url), { hostPolicy: LOOPBACK_POLICY });
    table = (await discoverSchema(executor, { tables: [tableName] })).tables[0]!;
    space = await store.ensureSpace(`space_resume_${engine}`);
  });
  afterAll(async () => {
    await run([`DROP TABLE IF EXISTS ${tableName}`]);
    await executor?.close();
  });

  const poll = (changeColumn: string, cursor: string | null, options: { src: string; stopAfterPages?: number; saved?: string[]; now?: () => number }) => {
    const abort = new AbortController();
    const saved = options.saved ?? [];
    const runArgs: PollRun = { executor, table, src: options.src, space, changeColumn, cursor, rowLimit: 1000, provider: null, columns: [], signal: abort.signal };
    return runPoll({
      pageRows: 5,
      queryTimeoutMs: 30_000,
      ...(options.now && { now: options.now }),
      saveCursor: async (value) => {
        saved.push(value);
        // The process stops after this page: its cursor is saved, the rest is left to whoever polls next.
        if (options.stopAfterPages !== undefined && saved.length >= options.stopAfterPages) abort.abort();
        return true;
      },
    }, runArgs);
  };

  /** The index's rows of the table as `id:title`, in id order, and the source's. */
  async function sides(src: string): Promise<{ index: string[]; source: string[] }> {
    const index: string[] = [];
    for await (const batch of space.scanSource(src)) {
      for (const row of await space.rows(batch.map((r) => r.rid))) {
        const fields = JSON.parse(row.fields) as { id: number; title: string };
        index.push(`${fields.id}:${fields.title}`);
      }
    }
    const rows = await executor.query<{ id: number; title: string }>(`SELECT id, title FROM ${tableName} ORDER BY id`, [], { timeoutMs: 10_000 });
    const byId = (a: string, b: string) => Number(a.split(':')[0]) - Number(b.split(':')[0]);
    return { index: index.sort(byId), source: rows.map((r) => `${r.id}:${r.title}`) };
  }

  it('when a poll by version stops after two pages, then the next one resumes from the stored cursor and the index ends equal to the source', async () => {
    const src = 'itb_resume_version';
    const saved: string[] = [];
    expect(await poll('version', null, { src, stopAfterPages: 2, saved })).toEqual({ status: 'stopped' });
    expect(saved.map((c) => parseCursor(c)!.value)).toEqual(['5', '10']);
    expect(saved.map((c) => parseCursor(c)!.key)).toEqual([[5], [10]]);
    expect((await sides(src)).index).toHaveLength(10);

    // The restarted poll reads versions 10..20 (the boundary again), writes the ten rows the first did not.
    const resumed = await poll('version', saved.at(-1)!, { src });
    expect(resumed).toMatchObject({ status: 'done', read: 11, written: 10, deleted: 0 });
    expect(parseCursor(resumed.status === 'done' ? resumed.cursor : null)).toMatchObject({ value: '20', key: [20] });
    let both = await sides(src);
    expect(both.index).toEqual(both.source);

    await run([`UPDATE ${tableName} SET title = 'row 3 about teapots', version = 21 WHERE id = 3`, `DELETE FROM ${tableName} WHERE id = 7`]);
    // A cursor saved before keys were (the value alone): the poll starts at the value, as it did then.
    const next = await poll('version', '"20"', { src });
    expect(next).toMatchObject({ status: 'done', read: 2, written: 1, deleted: 1 });
    expect(parseCursor(next.status === 'done' ? next.cursor : null)).toMatchObject({ value: '21', key: [3] });
    both = await sides(src);
    expect(both.index).toEqual(both.source);
    expect(both.index).toContain('3:row 3 about teapots');
  });

  it('when rows share one change value, then a poll pages through them by key and a resumed one reads them again without writing them twice', async () => {
    const src = 'itb_resume_stamped';
    const saved: string[] = [];
    expect(await poll('stamped', null, { src, stopAfterPages: 1, saved })).toEqual({ status: 'stopped' });
    expect((await sides(src)).index).toHaveLength(5);
    const resumed = await poll('stamped', saved.at(-1)!, { src });
    expect(resumed).toMatchObject({ status: 'done', read: 19, written: 14, deleted: 0 });
    const both = await sides(src);
    expect(both.index).toEqual(both.source);
    const again = await poll('stamped', resumed.status === 'done' ? resumed.cursor : null, { src });
    // Within BOUNDARY_REREAD_MS of reaching the shared value: its 19 rows (one was deleted above) are read again.
    expect(again).toMatchObject({ status: 'done', read: 19, written: 0, deleted: 0 });
  });

  it('when rows share the last change value, then polls read them again for BOUNDARY_REREAD_MS after it was reached, and after that only what follows the last key', async () => {
    const src = 'itb_resume_boundary';
    let clock = Date.now();
    const now = () => clock;
    const first = await poll('stamped', null, { src, now });
    // The table's 19 rows (one was deleted above), all stamped by one statement.
    expect(first).toMatchObject({ status: 'done', read: 19, written: 19 });
    const cursor = first.status === 'done' ? first.cursor : null;
    expect(parseCursor(cursor)).toMatchObject({ key: [20], since: clock });

    // Within the time others stamped alike may still commit: the rows are read again, none written.
    clock += BOUNDARY_REREAD_MS - 1;
    const within = await poll('stamped', cursor, { src, now });
    expect(within).toMatchObject({ status: 'done', read: 19, written: 0 });
    // The same value read again keeps the time it was first reached.
    expect(parseCursor(within.status === 'done' ? within.cursor : null)).toMatchObject({ key: [20], since: clock - BOUNDARY_REREAD_MS + 1 });

    // After it: nothing is read again; a row stamped later with a lower key than the last is read, and written.
    clock += 1;
    expect(await poll('stamped', within.status === 'done' ? within.cursor : null, { src, now })).toMatchObject({ status: 'done', read: 0, written: 0 });
    await run([`UPDATE ${tableName} SET title = 'row 2 about teacups', stamped = ${engine === 'postgres' ? 'clock_timestamp()' : 'CURRENT_TIMESTAMP(6)'} WHERE id = 2`]);
    const later = await poll('stamped', within.status === 'done' ? within.cursor : null, { src, now });
    expect(later).toMatchObject({ status: 'done', read: 1, written: 1 });
    expect(parseCursor(later.status === 'done' ? later.cursor : null)).toMatchObject({ key: [2], since: clock });
    const both = await sides(src);
    expect(both.index).toEqual(both.source);
  });
});
