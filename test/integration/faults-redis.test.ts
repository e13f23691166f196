/**
 * Fault: Quarry's Redis (rate limits, search cache, invalidation) dies mid-traffic and comes back. Runs a private
 * redis-server (never the shared one) and two Quarry processes on one store (a fresh database on PG_URL). Requests
 * keep answering (no 5xx, no 429 for it), health degrades and recovers, limits are shared again afterwards, nothing
 * answered is missing from analytics and usage, and each process logs the outage once when it starts and once when
 * it ends (it was 174 warnings in 10 seconds). The figures are printed for the record.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liftKeyLimits } from '../../scripts/lib/bench.js';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { setAccount } from '../../scripts/lib/store-admin.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser } from '../support/factories.js';
import { startPrivateRedis, type PrivateRedis } from '../support/fault-instances.js';
import { seedSqlite } from '../support/search-corpus.js';
import { freshPostgresDatabase } from '../support/stores.js';

let redis: PrivateRedis | undefined;
let servers: ServerProcess[] = [];
let database: { url: string; drop(): Promise<void> } | undefined;
let sqliteDir: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHealth(client: ApiClient, status: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await client.get('/health');
    if (last.body?.data?.status === status) return last;
    if (Date.now() > deadline) throw new Error(`health never became ${status}: ${JSON.stringify(last.body)}`);
    await sleep(250);
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

async function storeCount(sql: string, params: unknown[]): Promise<number> {
  const db = new pg.Client({ connectionString: database!.url });
  await db.connect();
  try {
    return Number((await db.query(sql, params)).rows[0]?.n ?? 0);
  } finally {
    await db.end();
  }
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  database = await freshPostgresDatabase();
  sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-fault-redis-sqlite-'));
  const shared = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    // Only the kill below is an outage: on a busy machine a reply may take longer than the default 250 ms.
    REDIS_TIMEOUT_MS: '2000',
    SQLITE_DATA_DIR: sqliteDir,
    JWT_SECRET: randomBytes(32).toString('hex'),
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    TRUST_PROXY: 'true',
  };
  servers.push(await spawnServer({ ...shared, DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-fault-a-')) }));
  servers.push(await spawnServer({ ...shared, DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-fault-b-')) }));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await redis?.cleanup();
  await database?.drop();
});

describe('Redis stops mid-traffic', () => {
  it('when Redis is killed under load and restarted, then requests keep answering, nothing answered is missing, health degrades and recovers, limits are shared again, and each process logs the outage twice', async () => {
    const [a, b] = servers.map((server) => new ApiClient(server.url));
    const user = await registerUser(a);
    await setAccount(database!.url, user.email, { plan: 'enterprise' });
    await seedSqlite(join(sqliteDir, user.id), 'notes.db', 'notes');
    const key = await createKey(a, user, { rateLimitTier: 'enterprise', permissions: ['search', 'analytics'] });
    await liftKeyLimits(database!.url, key.id);
    const notes = (await a.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'test' }, { token: user.token })).body.data.database.id;
    expect((await a.get('/health')).body.data).toMatchObject({ status: 'healthy', checks: { cache: { status: 'up' } } });
    const outputBefore = servers.map((server) => server.output().length);

    // Continuous traffic on both processes: searches (cached in Redis, recorded, invalidations published), key
    // reads (rate limits in Redis), and an unauthenticated one that must stay 401.
    const answers: Array<{ kind: 'search' | 'key' | 'anonymous'; status: number }> = [];
    let running = true;
    const loop = async (kind: 'search' | 'key' | 'anonymous', send: () => Promise<{ status: number }>) => {
      while (running) answers.push({ kind, status: (await send()).status });
    };
    const traffic = Promise.all([
      loop('search', () => a.post('/api/v1/search', { query: 'headphones', databases: [notes] }, { token: key.secret })),
      loop('search', () => b.post('/api/v1/search', { query: 'battery', databases: [notes] }, { token: key.secret })),
      loop('key', () => a.get('/api/v1/rate-limit/analytics', { token: key.secret })),
      loop('key', () => b.get('/api/v1/rate-limit/status', { token: key.secret })),
      loop('anonymous', () => a.get('/api/v1/rate-limit/status', { token: 'qk_test_not_a_real_key' })),
    ]);

    await sleep(1000);
    const beforeKill = answers.length;
    await redis!.kill();
    const degraded = await waitForHealth(a, 'degraded');
    expect(degraded.status).toBe(200);
    expect(degraded.body.data.checks).toMatchObject({ cache: { status: 'down' }, store: { status: 'up' } });
    await sleep(10_000); // traffic while Redis is down
    const duringOutage = answers.length;
    await redis!.start();
    await waitForHealth(a, 'healthy');
    await waitForHealth(b, 'healthy');
    // Health pings Redis itself; each process logs the end of the outage once every one of its Redis users (rate
    // limits, cache, invalidations) has reconnected, which on a busy machine can come a little later.
    await waitFor(() => servers.every((server, i) => server.output().slice(outputBefore[i]).includes('redis reachable again')), 'each process logs that Redis is back');
    await sleep(1000);
    running = false;
    await traffic;

    const fiveXx = answers.filter((x) => x.status >= 500).length;
    const limited = answers.filter((x) => x.status === 429).length;
    const searches200 = answers.filter((x) => x.kind === 'search' && x.status === 200).length;
    const key2xx = answers.filter((x) => x.kind !== 'anonymous' && x.status < 300).length;
    let recorded = 0;
    let usage2xx = 0;
    for (let i = 0; i < 40 && (recorded < searches200 || usage2xx < key2xx); i += 1) {
      await sleep(250);
      recorded = await storeCount('SELECT COUNT(*) AS n FROM search_records WHERE key_id = $1', [key.id]);
      usage2xx = await storeCount('SELECT COALESCE(SUM(requests - failed), 0) AS n FROM request_usage_minutely WHERE key_id = $1', [key.id]);
    }
    const logLines = servers.map((server, i) => server.output().slice(outputBefore[i]).split('\n').filter((line) => /redis/i.test(line)));
    const lost = logLines.map((lines) => lines.filter((line) => line.includes('redis unreachable')).length);
    const regained = logLines.map((lines) => lines.filter((line) => line.includes('redis reachable again')).length);
    console.info(`Redis down mid-load (10 s): ${answers.length} requests (${duringOutage - beforeKill} while down); 5xx ${fiveXx}, 429 ${limited}; `
      + `searches answered 200: ${searches200}, in analytics: ${recorded}, missing: ${searches200 - recorded}; key requests answered 2xx: ${key2xx}, in usage: ${usage2xx}, missing: ${key2xx - usage2xx}; `
      + `log lines about Redis per process: ${logLines.map((lines) => lines.length).join(' and ')} (outage started ${lost.join('/')}, ended ${regained.join('/')})`);

    expect(duringOutage).toBeGreaterThan(beforeKill + 10);
    expect(fiveXx).toBe(0);
    expect(limited).toBe(0);
    expect(new Set(answers.map((x) => x.status))).toEqual(new Set([200, 401]));
    expect(recorded).toBe(searches200);
    expect(usage2xx).toBe(key2xx);
    expect(lost).toEqual([1, 1]);
    expect(regained).toEqual([1, 1]);
    expect(logLines.map((lines) => lines.length)).toEqual([2, 2]);

    // Back on Redis: a fresh key's requests through A are counted where B reads them (and vice versa).
    const fresh = await createKey(a, user, { rateLimitTier: 'free', permissions: ['analytics'] });
    for (let i = 0; i < 5; i += 1) expect((await a.get('/api/v1/rate-limit/analytics', { token: fresh.secret })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await b.get('/api/v1/rate-limit/analytics', { token: fresh.secret })).status).toBe(200);
    const fromB = await b.get('/api/v1/rate-limit/status', { token: fresh.secret });
    const fromA = await a.get('/api/v1/rate-limit/status', { token: fresh.secret });
    // The status call is a peek (not counted): both see A's 5 and B's 3 in the one Redis counter.
    expect(fromB.body.data.rateLimit.current.requests).toBe(8);
    expect(fromA.body.data.rateLimit.current.requests).toBe(8);
  }, 120_000);
});
