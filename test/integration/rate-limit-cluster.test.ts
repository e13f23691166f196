/**
 * Two Quarry processes behind one "load balancer" share PostgreSQL and Redis: a key's limit must hold across
 * both, exactly. Needs PostgreSQL and Redis (PG_URL, REDIS_URL); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/api-client.js';
import { createKey, randomIp, registerUser } from '../support/factories.js';
import { seedSqlite } from '../support/search-corpus.js';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { freshPostgresDatabase, redisUrl } from '../support/stores.js';
import { setAccount } from '../../scripts/lib/store-admin.js';

let servers: ServerProcess[] = [];
let dropDatabase: () => Promise<void>;
/** SQLITE_DATA_DIR of both processes, so a connected SQLite file is the same database for either. */
const sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-cluster-sqlite-'));
let storeUrl: string;

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  storeUrl = database.url;
  const shared = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    // Exactness is the point: on a busy machine a Redis reply slower than the default 250 ms would make a process
    // decide from its own memory, as it does in a real outage.
    REDIS_TIMEOUT_MS: '2000',
    JWT_SECRET: randomBytes(32).toString('hex'),
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    TRUST_PROXY: 'true',
    SQLITE_DATA_DIR: sqliteDir,
  };
  // The first process applies the migrations; the second then starts on an up-to-date store.
  servers.push(await spawnServer({ ...shared, DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-a-')) }));
  servers.push(await spawnServer({ ...shared, DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-b-')) }));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await dropDatabase?.();
  rmSync(sqliteDir, { recursive: true, force: true });
});

describe('rate limits shared through Redis by two server processes', () => {
  it('when 600 requests for a key with a burst limit of 500 arrive at both processes, then exactly 500 are admitted', async () => {
    const [a, b] = servers.map((server) => new ApiClient(server.url));
    const user = await registerUser(a);
    await setAccount(storeUrl, user.email, { plan: 'enterprise' });
    const key = await createKey(a, user, { rateLimitTier: 'enterprise', permissions: ['analytics'] });
    const statuses: number[] = [];
    // Waves of 40 in flight (20 per process) stay under the tier's 50 concurrent requests, so only the
    // burst limit decides; within a wave the two processes race for the same Redis counters.
    for (let wave = 0; wave < 15; wave += 1) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).get('/api/v1/rate-limit/analytics', { token: key.secret })),
      );
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(500);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100);
    const fromB = await b.get('/api/v1/rate-limit/analytics', { token: key.secret });
    expect(fromB.status).toBe(429);
    expect(fromB.body.error.details.tier).toBe('enterprise');
    const status = await a.get('/api/v1/rate-limit/status', { token: key.secret });
    expect(status.body.data.rateLimit.current.requests).toBe(500);
  }, 120_000);

  it('when one visitor sends 12 searches with a publishable key to both processes at once, then exactly its 6 per IP are admitted', async () => {
    const [a, b] = servers.map((server) => new ApiClient(server.url));
    const user = await registerUser(a);
    await setAccount(storeUrl, user.email, { plan: 'pro' });
    // Each account connects only the SQLite files of its own folder.
    await seedSqlite(join(sqliteDir, user.id), 'cluster.db', 'products');
    const connected = await a.post('/api/v1/databases', { name: 'Cluster', engine: 'sqlite', database: 'cluster.db', environment: 'test' }, { token: user.token });
    expect(connected.status, JSON.stringify(connected.body)).toBe(201);
    const created = await a.post('/api/v1/keys/publishable', {
      name: 'Storefront', databases: [connected.body.data.database.id], allowedOrigins: ['https://shop.example.com'], rateLimitTier: 'pro', requestsPerIpPerHour: 6,
    }, { token: user.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const visitor = { token: created.body.data.publishableKey, headers: { 'X-Forwarded-For': randomIp() } };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).post('/api/v1/search', { query: 'battery' }, visitor)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(6);
    expect(answers.filter((answer) => answer.status === 429).map((answer) => answer.body.error.code)).toEqual(Array(6).fill('RATE_LIMIT_EXCEEDED'));
    const another = await b.post('/api/v1/search', { query: 'battery' }, { ...visitor, headers: { 'X-Forwarded-For': randomIp() } });
    expect(another.status).toBe(200);
  }, 60_000);

  it('when a key is revoked through one process, then the other rejects it at once (cache invalidated through Redis)', async () => {
    const [a, b] = servers.map((server) => new ApiClient(server.url));
    const user = await registerUser(a);
    await setAccount(storeUrl, user.email, { plan: 'pro' });
    const key = await createKey(a, user, { rateLimitTier: 'pro' });
    expect((await b.get('/health', { token: key.secret })).body.data.authenticated).toBe(true);
    expect((await a.delete(`/api/v1/keys/${key.id}`, { token: user.token })).status).toBe(200);
    // Pub/sub delivery is asynchronous: allow it a moment, but the answer must flip without waiting for a TTL.
    let answer = await b.get('/api/v1/rate-limit/status', { token: key.secret });
    for (let i = 0; i < 20 && answer.status !== 401; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      answer = await b.get('/api/v1/rate-limit/status', { token: key.secret });
    }
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('KEY_REVOKED');
  });

  it('when both processes report health to an admin, then both use Redis and the shared store', async () => {
    const admin = await registerUser(new ApiClient(servers[0]!.url));
    await setAccount(storeUrl, admin.email, { role: 'admin' });
    for (const server of servers) {
      const health = await new ApiClient(server.url).get('/api/v1/management/health', { token: admin.token });
      expect(health.body.data.checks).toMatchObject({ store: { status: 'up', detail: 'postgres' }, cache: { status: 'up', detail: 'redis' } });
    }
  });
});
