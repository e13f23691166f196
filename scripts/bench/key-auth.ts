/**
 * What key authentication costs: key-authenticated requests per second against the same route without auth, in one run.
 * Route: GET /health (public; with a key it also verifies the key: lookup by public id, HMAC-SHA-256 compare,
 * revocation and expiry checks, and reads the key's limit window without consuming it).
 *   npx tsx scripts/bench/key-auth.ts [seconds]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../lib/api-client.js';
import { createKey, registerUser } from '../lib/accounts.js';
import { load, printTable } from './lib/load.js';
import { spawnServer } from '../lib/spawn-server.js';
import { setAccount } from '../lib/store-admin.js';

const seconds = Number(process.argv[2] ?? 8);
const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true' });
try {
  const client = new ApiClient(server.url);
  const user = await registerUser(client);
  await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, user.email, { plan: 'enterprise' });
  const key = await createKey(client, user, { rateLimitTier: 'enterprise' });
  const check = await client.get('/health', { token: key.secret });
  if (!check.body.data.authenticated) throw new Error('the key did not authenticate');

  const baseline = await load('GET /health, no auth', `${server.url}/health`, { seconds });
  const keyed = await load('GET /health, API key verified', `${server.url}/health`, { seconds, headers: { authorization: `Bearer ${key.secret}` } });
  printTable(`Key authentication cost (${seconds} s per case, 16 connections, SQLite store)`, baseline, [keyed]);
  console.log(`\nkey-authenticated throughput = ${(keyed.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)} x the unauthenticated route`);
} finally {
  await server.stop();
}
