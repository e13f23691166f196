/**
 * A sync job whose process dies is taken over by another syncing process: two syncing Quarry
 * processes on one PostgreSQL store and one index folder; the one running a sync is frozen and killed mid-job, the
 * other claims the job once its heartbeat is stale (INDEX_SYNC_STALE_MS, default) and resumes it from its saved
 * position. Needs PostgreSQL (PG_URL); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { takeoverTimings } from '../../src/search-index/job-runner.js';
import { ApiClient } from '../support/api-client.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { operatorCommand } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { freshPostgresDatabase } from '../support/stores.js';

/** Enough rows for a sync of several writes (20,000 rows each): the job is killed after its first write is saved. */
const ROWS = 60_000;
/** The default staleness, as a start without INDEX_SYNC_STALE_MS has it. */
const timings = takeoverTimings();

type JobRow = { id: string; status: string; attempts: number; rows_done: number; rows_at_resume: number; heartbeat_at: Date | null; resumed_at: Date | null };

let servers: ServerProcess[] = [];
let store: pg.Client;
let dropDatabase: () => Promise<void>;
let dirs: string[] = [];
let sqliteDir: string;
let owner: TestUser;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The sync job of the `items` table, as the store has it. */
async function job(): Promise<JobRow | null> {
  const { rows } = await store.query<JobRow>("SELECT id, status, attempts, rows_done, rows_at_resume, heartbeat_at, resumed_at FROM index_jobs WHERE table_name = 'items' ORDER BY created_at DESC LIMIT 1");
  return rows[0] ?? null;
}

async function until(what: string, ms: number, check: () => Promise<JobRow | null>, done: (row: JobRow) => boolean): Promise<JobRow> {
  const deadline = Date.now() + ms;
  for (;;) {
    const row = await check();
    if (row && done(row)) return row;
    if (Date.now() > deadline) throw new Error(`${what} not reached: ${JSON.stringify(row)}`);
    await pause(100);
  }
}

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  store = new pg.Client({ connectionString: database.url });
  const indexDir = mkdtempSync(join(tmpdir(), 'quarry-takeover-index-'));
  sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-takeover-sqlite-'));
  dirs = [indexDir, sqliteDir];
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), API_KEY_PEPPER: randomBytes(32).toString('hex'), CREDENTIALS_KEY: randomBytes(32).toString('base64') };
  const shared = { DATABASE_URL: database.url, INDEX_URI: indexDir, SQLITE_DATA_DIR: sqliteDir, INDEX_SYNC: 'true', ...secrets };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-takeover-process-'));
    dirs.push(dir);
    return dir;
  };
  // The first applies the migrations; the second then starts on an up-to-date store.
  servers.push(await spawnServer({ ...shared, DATA_DIR: dataDir() }));
  servers.push(await spawnServer({ ...shared, DATA_DIR: dataDir() }));
  await store.connect();
  const client = new ApiClient(servers[0]!.url);
  owner = await registerUser(client);
  await operatorCommand({ DATABASE_URL: database.url, ...secrets }, ['plan', owner.email, 'enterprise']);
  await onSqlite(join(sqliteDir, owner.id), 'shop.db', [
    'CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       INSERT INTO items SELECT i, 'item ' || i || ' of the ' || CASE i % 3 WHEN 0 THEN 'garden' WHEN 1 THEN 'kitchen' ELSE 'workshop' END || ' range' FROM n`,
  ]);
}, 240_000);

afterAll(async () => {
  const alive = servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null);
  for (const server of alive) server.child.kill('SIGCONT');
  await Promise.all(alive.map((server) => server.stop()));
  await store?.end().catch(() => undefined);
  await dropDatabase?.();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a syncing process that dies mid-job', () => {
  it('when it is killed after saving a page, then the other syncing process takes the job over within the staleness and one poll, and resumes it to the end', async () => {
    const created = await new ApiClient(servers[0]!.url).post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, { token: owner.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const databaseId = created.body.data.database.id as string;
    await until('a saved page', 120_000, job, (row) => row.status === 'running' && row.rows_done > 0);

    // Which process runs it: freeze one; if the job's heartbeat still moves, it is the other.
    let [running, heir] = servers as [ServerProcess, ServerProcess];
    running.child.kill('SIGSTOP');
    const frozenBeat = (await job())!.heartbeat_at?.getTime();
    await pause(2 * timings.heartbeatMs + 500);
    const movedBeat = (await job())!.heartbeat_at?.getTime();
    if (movedBeat !== frozenBeat) {
      heir.child.kill('SIGSTOP');
      running.child.kill('SIGCONT');
      [running, heir] = [heir, running];
    }
    running.child.kill('SIGKILL');
    await new Promise((resolve) => (running.child.signalCode !== null ? resolve(undefined) : running.child.once('exit', resolve)));
    const dead = (await job())!;
    expect(dead).toMatchObject({ status: 'running', attempts: 1 });
    expect(dead.rows_done).toBeGreaterThan(0);
    expect(dead.rows_done).toBeLessThan(ROWS);

    const resumed = await until('the takeover', 120_000, job, (row) => row.attempts === 2);
    // Claimed again from the saved position, once the dead process's last heartbeat was stale, at the next poll.
    expect(resumed.rows_at_resume).toBe(dead.rows_done);
    const waited = resumed.resumed_at!.getTime() - dead.heartbeat_at!.getTime();
    console.info(`takeover: claimed again ${waited} ms after the dead process's last heartbeat (bound ${timings.takeoverWithinMs + timings.heartbeatMs} ms)`);
    expect(waited).toBeGreaterThanOrEqual(timings.staleMs);
    expect(waited, `takeover ${waited} ms after the last heartbeat`).toBeLessThanOrEqual(timings.takeoverWithinMs + timings.heartbeatMs);

    const [items] = await waitForIndex(new ApiClient(heir.url), owner.token, databaseId);
    expect(items).toMatchObject({ state: 'ready', rows: ROWS, job: { status: 'done', attempts: 2 } });
  }, 360_000);
});
