/**
 * Many machines, one index (issue 34): three Quarry processes on one PostgreSQL store and one index on an
 * S3-compatible store that honours conditional writes (test/support/s3-store.ts, on loopback, started here). Two of
 * them sync, the third only answers. A sync runs; the others answer every search meanwhile; the process running it
 * is killed mid-job and the other syncing one resumes it, so the index ends equal to the source; then the object store
 * goes down and searches are answered live. No answer is a 5xx. Needs PostgreSQL (PG_URL).
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
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { operatorCommand } from '../support/operator.js';
import { startS3Store, type S3Store } from '../support/s3-store.js';
import { onSqlite } from '../support/seed-databases.js';
import { freshPostgresDatabase } from '../support/stores.js';

const ROWS = 20_000;
const timings = takeoverTimings();

type JobRow = { status: string; attempts: number; rows_done: number; heartbeat_at: Date | null };

let s3: S3Store;
let syncers: ServerProcess[] = [];
let reader: ServerProcess;
let store: pg.Client;
let dropDatabase: () => Promise<void>;
let dirs: string[] = [];
let owner: TestUser;
let key: TestKey;
const statuses: number[] = [];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function job(): Promise<JobRow | null> {
  const { rows } = await store.query<JobRow>("SELECT status, attempts, rows_done, heartbeat_at FROM index_jobs WHERE table_name = 'items' ORDER BY created_at DESC LIMIT 1");
  return rows[0] ?? null;
}
async function search(server: ServerProcess, query: string) {
  const res = await new ApiClient(server.url).post('/api/v1/search', { query, limit: 5 }, { token: key.secret });
  statuses.push(res.status);
  return res;
}

beforeAll(async () => {
  s3 = await startS3Store({ conditionalWrites: true });
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  store = new pg.Client({ connectionString: database.url });
  const sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-s3-sqlite-'));
  dirs = [sqliteDir];
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), API_KEY_PEPPER: randomBytes(32).toString('hex'), CREDENTIALS_KEY: randomBytes(32).toString('base64') };
  const shared = {
    DATABASE_URL: database.url, SQLITE_DATA_DIR: sqliteDir, INDEX_READ_CONSISTENCY_MS: '500', ...secrets,
    INDEX_URI: 's3://quarry/index', INDEX_S3_ENDPOINT: s3.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
    INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'quarry-test-secret',
  };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-s3-process-'));
    dirs.push(dir);
    return dir;
  };
  syncers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'true' }));
  syncers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'true' }));
  reader = await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'false' });
  await store.connect();
  const client = new ApiClient(reader.url);
  owner = await registerUser(client);
  await operatorCommand({ DATABASE_URL: database.url, ...secrets }, ['plan', owner.email, 'enterprise']);
  key = await createKey(client, owner, { rateLimitTier: 'enterprise' });
  await onSqlite(join(sqliteDir, owner.id), 'shop.db', [
    'CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       INSERT INTO items SELECT i, 'item ' || i || ' of the ' || CASE i % 3 WHEN 0 THEN 'garden' WHEN 1 THEN 'kitchen' ELSE 'workshop' END || ' range' FROM n`,
  ]);
}, 300_000);

afterAll(async () => {
  await s3?.up().catch(() => undefined);
  const alive = [...syncers, reader].filter((server) => server && server.child.exitCode === null && server.child.signalCode === null);
  for (const server of alive) server.child.kill('SIGCONT');
  await Promise.all(alive.map((server) => server.stop()));
  await store?.end().catch(() => undefined);
  await dropDatabase?.();
  await s3?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('three processes, one index on an object store', () => {
  it('when the syncing process is killed mid-job and later the store goes down, then the index ends equal to the source and no search is a 5xx', async () => {
    const created = await new ApiClient(syncers[0]!.url).post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, { token: owner.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const databaseId = created.body.data.database.id as string;
    for (let deadline = Date.now() + 180_000; ;) {
      const row = await job();
      if (row?.status === 'running' && row.rows_done > 0) break;
      expect(Date.now(), `a saved page: ${JSON.stringify(row)}`).toBeLessThan(deadline);
      await search(reader, 'garden');
      await pause(200);
    }

    // The process running the sync: freeze one; if the job's heartbeat still moves, it is the other. Kill it.
    let [running, heir] = syncers as [ServerProcess, ServerProcess];
    running.child.kill('SIGSTOP');
    const frozen = (await job())!.heartbeat_at?.getTime();
    await pause(2 * timings.heartbeatMs + 500);
    if ((await job())!.heartbeat_at?.getTime() !== frozen) {
      heir.child.kill('SIGSTOP');
      running.child.kill('SIGCONT');
      [running, heir] = [heir, running];
    }
    running.child.kill('SIGKILL');
    expect(await job()).toMatchObject({ status: 'running', attempts: 1 });

    // The other two answer throughout, until the heir has resumed the job and finished it.
    for (let deadline = Date.now() + 240_000; ;) {
      for (const server of [heir, reader]) expect((await search(server, 'garden')).status).toBe(200);
      const row = await job();
      if (row?.status === 'done') break;
      expect(row?.status).not.toBe('failed');
      expect(Date.now(), `the resumed sync: ${JSON.stringify(row)}`).toBeLessThan(deadline);
      await pause(500);
    }
    expect(await job()).toMatchObject({ status: 'done', attempts: 2 });
    const [items] = await waitForIndex(new ApiClient(reader.url), owner.token, databaseId);
    expect(items).toMatchObject({ state: 'ready', rows: ROWS });
    await pause(1000); // the readers' read-consistency interval
    for (const server of [heir, reader]) {
      const res = await new ApiClient(server.url).post('/api/v1/search', { query: 'garden', databases: [databaseId], limit: 5, exactTotal: true }, { token: key.secret });
      statuses.push(res.status);
      expect(res.body.data.databases[0].source).toBe('index');
    }

    await s3.down();
    try {
      // Words not searched before: a page cached from the index would not show where the answer comes from.
      for (const server of [heir, reader]) {
        const res = await search(server, 'workshop');
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.data.databases[0]).toMatchObject({ source: 'live', status: 'ok' });
        expect(res.body.data.liveTables).toEqual([{ databaseId, table: 'items', reason: 'index_unavailable' }]);
        expect(res.body.data.results.length).toBe(5);
      }
    } finally {
      await s3.up();
    }
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(4);
  }, 600_000);
});
