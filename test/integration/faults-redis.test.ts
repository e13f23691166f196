/**
 * Fault: Quarry's Redis (rate limits, cache, invalidation) dies mid-traffic and comes back. Runs a private
 * redis-server (never the shared one) and two Quarry processes on one store (a fresh database on PG_URL).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser } from '../support/factories.js';
import { startPrivateRedis, type PrivateRedis } from '../support/fault-instances.js';
import { freshPostgresDatabase } from '../support/stores.js';

let redis: PrivateRedis | undefined;
let servers: ServerProcess[] = [];
let dropDatabase: (() => Promise<void>) | undefined;

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

beforeAll(async () => {
  redis = await startPrivateRedis();
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  const shared = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
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
  await dropDatabase?.();
});

describe('Redis stops mid-traffic', () => {
  it('when Redis is killed under load and restarted, then requests keep answering, health degrades and recovers, and limits are shared again', async () => {
    const [a, b] = servers.map((server) => new ApiClient(server.url));
    const user = await registerUser(a);
    const key = await createKey(a, user, { rateLimitTier: 'enterprise', permissions: ['search', 'analytics'] });
    expect((await a.get('/health')).body.data).toMatchObject({ status: 'healthy', checks: { cache: { status: 'up', detail: 'redis' } } });

    // Continuous traffic: a few concurrent loops of key requests, plus an unauthenticated one that must be 401.
    const statuses: number[] = [];
    let running = true;
    const loop = async (client: ApiClient, path: string, token?: string) => {
      while (running) statuses.push((await client.get(path, token ? { token } : {})).status);
    };
    const traffic = Promise.all([
      loop(a, '/api/v1/rate-limit/status', key.secret),
      loop(a, '/api/v1/rate-limit/analytics', key.secret),
      loop(b, '/api/v1/rate-limit/status', key.secret),
      loop(a, '/api/v1/rate-limit/status', 'qk_test_not_a_real_key'),
    ]);

    await sleep(500);
    const beforeKill = statuses.length;
    await redis!.kill();
    const degraded = await waitForHealth(a, 'degraded');
    expect(degraded.status).toBe(200);
    expect(degraded.body.data.checks.cache.status).toBe('down');
    expect(degraded.body.data.checks.store.status).toBe('up');
    await sleep(1500); // traffic while Redis is down
    const duringOutage = statuses.length;

    await redis!.start();
    await waitForHealth(a, 'healthy');
    await waitForHealth(b, 'healthy');
    await sleep(500);
    running = false;
    await traffic;

    expect(duringOutage).toBeGreaterThan(beforeKill + 10); // requests kept being answered during the outage
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([200, 401]));

    // Back on Redis: a fresh key's requests through A are counted where B reads them (and vice versa).
    const fresh = await createKey(a, user, { rateLimitTier: 'free', permissions: ['analytics'] });
    for (let i = 0; i < 5; i += 1) expect((await a.get('/api/v1/rate-limit/analytics', { token: fresh.secret })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await b.get('/api/v1/rate-limit/analytics', { token: fresh.secret })).status).toBe(200);
    const fromB = await b.get('/api/v1/rate-limit/status', { token: fresh.secret });
    const fromA = await a.get('/api/v1/rate-limit/status', { token: fresh.secret });
    // The status call is a peek (not counted): both see A's 5 and B's 3 in the one Redis counter.
    expect(fromB.body.data.rateLimit.current.requests).toBe(8);
    expect(fromA.body.data.rateLimit.current.requests).toBe(8);
  }, 90_000);
});
