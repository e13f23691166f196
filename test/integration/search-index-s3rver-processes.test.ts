/**
 * Many machines, one index, on a real S3-compatible server: three Quarry processes (their own OS processes) on one
 * PostgreSQL store, one Redis and one index on s3rver (loopback, started here) behind the proxy that honours
 * conditional writes (scripts/lib/s3rver.ts; s3rver alone is refused at start). Two of them sync, the third only
 * answers. A PostgreSQL table is synced; the others answer every search meanwhile; the process running the sync is
 * killed with SIGKILL mid-job and the other syncing one takes it over, so the index ends equal to the source, row
 * by row; then s3rver stops and searches are answered live, marked per database, and health reports the index's
 * storage down. No answer is a 5xx. Needs PostgreSQL (PG_URL) and Redis (REDIS_URL).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { spaceName } from '../../src/search-index/index-store.js';
import { takeoverTimings } from '../../src/search-index/job-runner.js';
import { loadLance } from '../../src/search-index/lance.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { operatorCommand } from '../support/operator.js';
import { S3RVER_CREDENTIALS, startS3rver, type S3rverStore } from '../support/s3rver.js';
import { freshPostgresDatabase, redisUrl } from '../support/stores.js';

const ROWS = 20_000;
const BUCKET = 'quarry';
const timings = takeoverTimings();

type JobRow = { status: string; attempts: number; rows_done: number; heartbeat_at: Date | null };

let s3: S3rverStore;
let syncers: ServerProcess[] = [];
let reader: ServerProcess;
let store: pg.Client;
let source: pg.Client;
let drops: Array<() => Promise<void>> = [];
let dirs: string[] = [];
let sourceUrl: URL;
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
const title = (i: number) => `item ${i} of the ${['garden', 'kitchen', 'workshop'][i % 3]} range`;

/** Every row of the owner's search space as the index on s3rver holds it: primary key and the row's fields. */
async function indexRows(): Promise<Map<number, string>> {
  const { lancedb } = await loadLance();
  const connection = await lancedb.connect(`s3://${BUCKET}/index`, {
    storageOptions: {
      aws_endpoint: s3.url, aws_region: 'us-east-1', allow_http: 'true',
      aws_access_key_id: S3RVER_CREDENTIALS.accessKeyId, aws_secret_access_key: S3RVER_CREDENTIALS.secretAccessKey,
    },
  });
  try {
    const table = await connection.openTable(spaceName(owner.id, 'test'));
    const rows = await table.query().select(['pk', 'fields']).limit(10 * ROWS).toArray();
    const found = new Map<number, string>();
    for (const row of rows as Array<{ pk: string; fields: string }>) {
      const id = Number(JSON.parse(row.pk).id);
      expect(found.has(id), `row ${id} twice in the index`).toBe(false);
      found.set(id, String(JSON.parse(row.fields).title));
    }
    return found;
  } finally {
    connection.close();
  }
}

beforeAll(async () => {
  s3 = await startS3rver(BUCKET);
  const database = await freshPostgresDatabase();
  const users = await freshPostgresDatabase();
  drops = [database.drop, users.drop];
  store = new pg.Client({ connectionString: database.url });
  source = new pg.Client({ connectionString: users.url });
  sourceUrl = new URL(users.url);
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), API_KEY_PEPPER: randomBytes(32).toString('hex'), CREDENTIALS_KEY: randomBytes(32).toString('base64') };
  const shared = {
    DATABASE_URL: database.url, REDIS_URL: redisUrl, TRUST_PROXY: 'true', INDEX_READ_CONSISTENCY_MS: '500', ...secrets,
    INDEX_URI: `s3://${BUCKET}/index`, INDEX_S3_ENDPOINT: s3.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
    INDEX_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, INDEX_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    // A version's rows held in memory answer a search without the store whenever no read-consistency check falls
    // in it; the outage part of this test is about the searches that need the store (as index-object-store-outage).
    INDEX_ROW_CACHE_MB: '0',
  };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-s3rver-process-'));
    dirs.push(dir);
    return dir;
  };
  // The first process applies the migrations; the others then start on an up-to-date store.
  syncers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'true' }));
  syncers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'true' }));
  reader = await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'false' });
  await store.connect();
  await source.connect();
  await source.query('CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)');
  await source.query(`INSERT INTO items SELECT i, 'item ' || i || ' of the ' || (ARRAY['garden', 'kitchen', 'workshop'])[i % 3 + 1] || ' range' FROM generate_series(1, ${ROWS}) AS i`);
  const client = new ApiClient(reader.url);
  owner = await registerUser(client);
  await operatorCommand({ DATABASE_URL: database.url, ...secrets }, ['plan', owner.email, 'enterprise']);
  key = await createKey(client, owner, { rateLimitTier: 'enterprise' });
}, 300_000);

afterAll(async () => {
  await s3?.up().catch(() => undefined);
  const alive = [...syncers, reader].filter((server) => server && server.child.exitCode === null && server.child.signalCode === null);
  for (const server of alive) server.child.kill('SIGCONT');
  await Promise.all(alive.map((server) => server.stop()));
  await store?.end().catch(() => undefined);
  await source?.end().catch(() => undefined);
  for (const drop of drops) await drop();
  await s3?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('three processes, one index on s3rver', () => {
  it('when the syncing process is killed mid-job and later s3rver stops, then the index ends equal to the source row by row, searches are answered live and no search is a 5xx', async () => {
    const created = await new ApiClient(syncers[0]!.url).post('/api/v1/databases', {
      name: 'Shop', engine: 'postgres', host: '127.0.0.1', port: Number(sourceUrl.port || 5432), database: sourceUrl.pathname.slice(1),
      username: 'postgres', password: '', environment: 'test',
    }, { token: owner.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const databaseId = created.body.data.database.id as string;
    for (let deadline = Date.now() + 180_000; ;) {
      const row = await job();
      if (row?.status === 'running' && row.rows_done > 0) break;
      expect(row?.status, `the sync ended before it could be killed: ${JSON.stringify(row)}`).not.toBe('done');
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
    heir.child.kill('SIGCONT');

    // The other two answer throughout, until the heir has resumed the job and finished it.
    for (let deadline = Date.now() + 300_000; ;) {
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

    // Row by row: every source key once, with its content, and nothing else.
    const indexed = await indexRows();
    expect(indexed.size).toBe(ROWS);
    const { rows: sourceRows } = await source.query<{ id: number; title: string }>('SELECT id, title FROM items ORDER BY id');
    const differing = sourceRows.filter((row) => indexed.get(row.id) !== row.title);
    expect(differing.slice(0, 5)).toEqual([]);
    expect(indexed.get(7)).toBe(title(7));

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
        const health = await new ApiClient(server.url).get('/api/v1/management/health');
        expect(health.status).toBe(200);
        expect(health.body.data).toMatchObject({ status: 'degraded', checks: { store: { status: 'up' }, index: { status: 'down' } } });
      }
    } finally {
      await s3.up();
    }
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(4);
    console.log(`s3rver: ${statuses.length} searches, none a 5xx; ${ROWS} rows equal to the source; ${s3.refused()} conditional writes refused by the proxy`);
  }, 900_000);
});
