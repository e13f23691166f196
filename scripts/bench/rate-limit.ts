/**
 * What the rate limiter costs per request, with the memory store and with Redis, against the
 * same key-authenticated route with limiting disabled, in one run. The key gets custom limits far above the
 * load, so every request is decided (hour window, burst window, concurrency lease) and none is refused.
 *   npx tsx scripts/bench/rate-limit.ts [seconds]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../lib/api-client.js';
import { createKey, registerUser } from '../lib/accounts.js';
import { liftKeyLimits } from '../lib/store-admin.js';
import { load, printTable, type LoadResult } from './lib/load.js';
import { spawnServer } from '../lib/spawn-server.js';

const seconds = Number(process.argv[2] ?? 8);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// A key-authenticated route that consumes the limit and does little else, so the limiter's share shows.
const route = '/api/v1/search/suggestions?q=bench';

async function measure(label: string, env: Record<string, string>): Promise<LoadResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', JWT_SECRET: randomBytes(32).toString('hex'), ...env });
  try {
    const client = new ApiClient(server.url);
    const user = await registerUser(client);
    const key = await createKey(client, user, { permissions: ['search'] });
    await liftKeyLimits(`sqlite:${join(dataDir, 'quarry.sqlite')}`, key.id);
    const probe = await client.get(route, { token: key.secret });
    if (env.RATE_LIMIT_ENABLED !== 'false' && !probe.headers.get('x-ratelimit-limit')) throw new Error(`no rate-limit headers: ${probe.status}`);
    return await load(label, server.url + route, { seconds, headers: { authorization: `Bearer ${key.secret}` } });
  } finally {
    await server.stop();
  }
}

const baseline = await measure('limiter disabled', { RATE_LIMIT_ENABLED: 'false' });
const memory = await measure('memory store', {});
const redis = await measure('Redis store', { REDIS_URL: redisUrl });
printTable(`Rate limiter cost on GET ${route} (${seconds} s per case, 16 connections)`, baseline, [memory, redis]);
for (const row of [memory, redis]) {
  const perRequestUs = (1e6 / row.requestsPerSecond - 1e6 / baseline.requestsPerSecond).toFixed(0);
  console.log(`${row.label}: ${(row.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)} x baseline throughput, about ${perRequestUs} µs of server time per request`);
}
