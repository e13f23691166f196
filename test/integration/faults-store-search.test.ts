/**
 * Fault: Quarry's own store (PostgreSQL, a private cluster) goes down while a key is searching.
 * A key the store verified in the last minute keeps searching its databases, from the index and live, past the
 * 5-second key cache; a key this process has not seen gets 503 STORE_UNAVAILABLE with Retry-After; a key revoked
 * before the outage stays refused. The searches answered during the outage are in analytics once the store is back.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { liftKeyLimits } from '../../scripts/lib/bench.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { onPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../support/fault-instances.js';
import { waitForIndex } from '../support/indexing.js';
import { seedSqlite } from '../support/search-corpus.js';

/** Longer than the 5-second key cache: what answers after it is the outage grace, not the ordinary cache. */
const OUTAGE_SEARCH_MS = 8_000;

let postgres: PrivatePostgres | undefined;
let server: ServerProcess | undefined;
let client: ApiClient;
let user: TestUser;
let used: TestKey;
let unseen: TestKey;
let revoked: TestKey;
let notes: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function recordedSearches(keyId: string): Promise<number> {
  const db = new pg.Client({ connectionString: postgres!.urlFor('quarry') });
  await db.connect();
  try {
    return Number((await db.query('SELECT COUNT(*) AS n FROM search_records WHERE key_id = $1', [keyId])).rows[0].n);
  } finally {
    await db.end();
  }
}

const searchIndex = (key: TestKey) => client.post('/api/v1/search', { query: 'headphones', databases: [notes] }, { token: key.secret });
const searchLive = (key: TestKey) => client.post('/api/v1/search', { query: 'battery', databases: [notes], live: true }, { token: key.secret });

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await onPrivatePostgres(postgres.url, ['CREATE DATABASE quarry']);
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-fault-store-search-'));
  server = await spawnServer({ DATABASE_URL: postgres.urlFor('quarry'), DATA_DIR: dataDir, USAGE_FLUSH_MS: '200', SEARCH_CACHE_TTL_MS: '0' });
  client = new ApiClient(server.url);
  user = await registerUser(client);
  used = await createKey(client, user, { permissions: ['search'] });
  unseen = await createKey(client, user, { permissions: ['search'] });
  revoked = await createKey(client, user, { permissions: ['search'] });
  await liftKeyLimits(postgres.urlFor('quarry'), used.id); // it searches for seconds on end; its limits are not the point
  await seedSqlite(join(dataDir, 'sqlite', user.id), 'notes.db', 'notes');
  const connected = await client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'test' }, { token: user.token });
  notes = connected.body.data.database.id;
  await waitForIndex(client, user.token, notes);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await postgres?.cleanup();
});

describe("Quarry's own store goes down while keys search", () => {
  it('when the store is down, then a key used just before keeps getting 200 searches (index and live), an unseen key gets 503 STORE_UNAVAILABLE, and a key revoked before is refused', async () => {
    // Before the outage: `used` and `revoked` search (the store verifies them), then `revoked` is revoked.
    const indexed = await searchIndex(used);
    expect(indexed.status).toBe(200);
    expect(indexed.body.data.databases[0].source).toBe('index');
    expect((await searchLive(used)).status).toBe(200);
    expect((await searchIndex(revoked)).status).toBe(200);
    expect((await client.delete(`/api/v1/keys/${revoked.id}`, { token: user.token })).status).toBe(200);
    expect((await searchIndex(revoked)).body.error?.code).toBe('KEY_REVOKED');
    const before = await recordedSearches(used.id);

    await postgres!.stop();
    await waitFor(async () => (await client.get('/health')).status === 503, 'health 503');
    const outageStarted = Date.now();
    const answers: Array<{ kind: string; status: number; code?: string; source?: string }> = [];
    while (Date.now() - outageStarted < OUTAGE_SEARCH_MS) {
      for (const [kind, res] of [['index', await searchIndex(used)], ['live', await searchLive(used)]] as const) {
        answers.push({ kind, status: res.status, code: res.body?.error?.code, source: res.body?.data?.databases?.[0]?.source });
      }
      await sleep(200);
    }
    const stranger = await searchIndex(unseen);
    const refused = await searchIndex(revoked);
    const rejected = await searchLive(revoked);

    await postgres!.start();
    await waitFor(async () => (await client.get('/health')).status === 200, 'health 200 again');

    expect(answers.filter((a) => a.status !== 200), JSON.stringify(answers.slice(-4))).toEqual([]);
    expect(answers.filter((a) => a.kind === 'index').every((a) => a.source === 'index')).toBe(true);
    expect(answers.filter((a) => a.kind === 'live').every((a) => a.source === 'live')).toBe(true);
    expect(stranger.status).toBe(503);
    expect(stranger.body.error.code).toBe('STORE_UNAVAILABLE');
    expect(Number(stranger.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const res of [refused, rejected]) {
      // Its revocation dropped every memory of it: only the store could say more, and it is down.
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('STORE_UNAVAILABLE');
    }
    // Every search answered during the outage waited in memory and is written now.
    await waitFor(async () => (await recordedSearches(used.id)) - before >= answers.length, 'outage searches recorded');
    expect(server!.child.exitCode).toBeNull();
  }, 120_000);
});
