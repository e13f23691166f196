/**
 * Fault: Quarry's own store (PostgreSQL, a private cluster, never the shared one) goes down under load and comes
 * back, then runs out of connection slots ("sorry, too many clients already") under load.
 * Whatever needs the store answers 503 STORE_UNAVAILABLE with Retry-After, never 500; anonymous health says only
 * that the store is down; the process stays up and recovers without a restart; and every search and key request
 * answered before, during or after is in analytics and usage afterwards. The figures are printed for the record.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { liftKeyLimits } from '../../scripts/lib/bench.js';
import { setAccount } from '../../scripts/lib/store-admin.js';
import { ApiClient, type ApiResponse } from '../support/api-client.js';
import { createKey, fromIp, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { onPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../support/fault-instances.js';
import { seedSqlite } from '../support/search-corpus.js';

let postgres: PrivatePostgres | undefined;
let server: ServerProcess | undefined;
let client: ApiClient;
let user: TestUser;
let admin: TestUser;
let key: TestKey;
let notes: string;
let dataDir: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await onPrivatePostgres(postgres.url, ['CREATE DATABASE quarry']);
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-fault-store-'));
  server = await spawnServer({ DATABASE_URL: postgres.urlFor('quarry'), DATA_DIR: dataDir, TRUST_PROXY: 'true', USAGE_FLUSH_MS: '200', SEARCH_CACHE_TTL_MS: '0' });
  client = new ApiClient(server.url);
  user = await registerUser(client);
  admin = await registerUser(client);
  await setAccount(postgres.urlFor('quarry'), user.email, { plan: 'pro' });
  await setAccount(postgres.urlFor('quarry'), admin.email, { role: 'admin' });
  key = await createKey(client, user, { rateLimitTier: 'pro', permissions: ['search', 'analytics'] });
  await liftKeyLimits(postgres.urlFor('quarry'), key.id); // the load is the point, not the key's limits
  await seedSqlite(join(dataDir, 'sqlite', user.id), 'notes.db', 'notes');
  const connected = await client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'test' }, { token: user.token });
  notes = connected.body.data.database.id;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await postgres?.cleanup();
});

interface Answer {
  kind: 'search' | 'key' | 'account';
  status: number;
  code?: string;
  retryAfter: string | null;
}

/** Steady traffic of the three kinds until `stop` is called: searches, key reads and JWT reads of the store. */
function load() {
  const answers: Answer[] = [];
  let running = true;
  const note = (kind: Answer['kind'], res: ApiResponse) =>
    answers.push({ kind, status: res.status, code: res.body?.error?.code, retryAfter: res.headers.get('retry-after') });
  const loop = async (kind: Answer['kind'], send: () => Promise<ApiResponse>) => {
    while (running) {
      note(kind, await send());
      await sleep(20);
    }
  };
  const done = Promise.all([
    loop('search', () => client.post('/api/v1/search', { query: 'headphones', databases: [notes] }, { token: key.secret })),
    loop('search', () => client.post('/api/v1/search', { query: 'battery', databases: [notes] }, { token: key.secret })),
    loop('key', () => client.get('/api/v1/rate-limit/status', { token: key.secret })),
    loop('account', () => client.get('/api/v1/keys', { token: user.token })),
  ]);
  return { answers, stop: async () => { running = false; await done; } };
}

async function storeCount(sql: string, params: unknown[]): Promise<number> {
  const db = new pg.Client({ connectionString: postgres!.urlFor('quarry') });
  await db.connect();
  try {
    return Number((await db.query(sql, params)).rows[0]?.n ?? 0);
  } finally {
    await db.end();
  }
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(250);
  }
}

const writtenSoFar = async () => ({
  recorded: await storeCount('SELECT COUNT(*) AS n FROM search_records WHERE key_id = $1', [key.id]),
  usage2xx: await storeCount('SELECT COALESCE(SUM(requests - failed), 0) AS n FROM request_usage_minutely WHERE key_id = $1', [key.id]),
});

/** The figures of one fault: 5xx by code, and records answered that are missing from the store afterwards. */
async function figures(label: string, answers: Answer[], before: { recorded: number; usage2xx: number }) {
  const fiveXx = answers.filter((a) => a.status >= 500);
  const byCode = Object.entries(fiveXx.reduce<Record<string, number>>((acc, a) => ((acc[`${a.status} ${a.code}`] = (acc[`${a.status} ${a.code}`] ?? 0) + 1), acc), {}));
  const searches200 = answers.filter((a) => a.kind === 'search' && a.status === 200).length;
  // Every answered key request (search or status) is counted in usage; those refused before the key was known are not.
  const key2xx = answers.filter((a) => a.kind !== 'account' && a.status < 300).length;
  let recorded = 0;
  let usage2xx = 0;
  await waitFor(async () => {
    const now = await writtenSoFar();
    recorded = now.recorded - before.recorded;
    usage2xx = now.usage2xx - before.usage2xx;
    return recorded >= searches200 && usage2xx >= key2xx;
  }, `${label}: every answered record written`).catch(() => undefined);
  const statuses = Object.entries(answers.reduce<Record<number, number>>((acc, a) => ((acc[a.status] = (acc[a.status] ?? 0) + 1), acc), {}));
  const line = `${label}: ${answers.length} requests (${statuses.map(([k, v]) => `${k}: ${v}`).join(', ')}); 5xx ${fiveXx.length} (${byCode.map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'}); `
    + `searches answered 200: ${searches200}, in analytics: ${recorded}, missing: ${searches200 - recorded}; `
    + `key requests answered 2xx: ${key2xx}, in usage: ${usage2xx}, missing: ${key2xx - usage2xx}`;
  console.info(line);
  return { fiveXx, searches200, recorded, key2xx, usage2xx };
}

describe("PostgreSQL as Quarry's own store fails under load", () => {
  it('when the store stops mid-load and comes back, then 503 STORE_UNAVAILABLE with Retry-After (never 500), anonymous health hides the cause, and nothing answered is missing', async () => {
    const before = await writtenSoFar();
    const traffic = load();
    await sleep(1500);
    await postgres!.stop();
    let health = await client.get('/health');
    await waitFor(async () => (health = await client.get('/health')).status === 503, 'health 503');
    await sleep(6000); // past the 5-second caches: key status and account reads now need the store (searches go on, STORE_OUTAGE_GRACE_MS)
    const anonymous = JSON.stringify([health.body, (await client.get('/api/v1/management/health')).body]);
    const login = await client.post('/api/v1/auth/login', { email: user.email, password: user.password }, fromIp());
    await postgres!.start();
    await waitFor(async () => (await client.get('/health')).status === 200, 'health 200 again');
    await sleep(1500);
    await traffic.stop();

    expect(health.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { checks: { store: { status: 'down', detail: 'unavailable' } } } });
    expect(anonymous).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|\d+\.\d+\.\d+\.\d+:\d+/);
    expect(login.status).toBe(503);
    expect(login.body.error.code).toBe('STORE_UNAVAILABLE');
    expect(Number(login.headers.get('retry-after'))).toBeGreaterThan(0);

    const { fiveXx, searches200, recorded, key2xx, usage2xx } = await figures('store down mid-load', traffic.answers, before);
    expect(fiveXx.length).toBeGreaterThan(0); // the outage was felt
    for (const answer of fiveXx) {
      expect(answer.status).toBe(503);
      expect(['STORE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']).toContain(answer.code);
      if (answer.code === 'STORE_UNAVAILABLE') expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    expect(recorded).toBe(searches200);
    expect(usage2xx).toBe(key2xx);
    expect(server!.child.exitCode).toBeNull();
    const detailed = await client.get('/api/v1/management/health', { token: admin.token });
    expect(detailed.body.data.checks.store).toMatchObject({ status: 'up', detail: 'postgres' });
  }, 120_000);

  it('when the store runs out of connection slots mid-load (too many clients), then the same: 503s, no 500, no record lost or dropped', async () => {
    await sleep(1000); // the last test's records are written
    const before = await writtenSoFar();
    const traffic = load();
    await sleep(1000);
    // Quarry's own connections end, and all but two slots are taken: most of its new connections are refused.
    const holders: pg.Client[] = [];
    const admin = new pg.Client({ connectionString: postgres!.url });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'quarry' AND pid <> pg_backend_pid()");
    const { rows } = await admin.query("SELECT current_setting('max_connections')::int - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS free");
    for (let i = 0; i < Number(rows[0].free) - 2; i += 1) {
      const holder = new pg.Client({ connectionString: postgres!.url });
      await holder.connect().then(() => holders.push(holder), () => undefined);
    }
    await sleep(4000);
    await Promise.all(holders.map((holder) => holder.end()));
    await admin.end();
    await sleep(2000);
    await traffic.stop();

    const { fiveXx, searches200, recorded, key2xx, usage2xx } = await figures('store out of connections mid-load', traffic.answers, before);
    for (const answer of fiveXx) {
      expect(answer.status).toBe(503);
      expect(answer.code).toBe('STORE_UNAVAILABLE');
    }
    expect(recorded).toBe(searches200);
    expect(usage2xx).toBe(key2xx);
    expect(server!.output()).not.toMatch(/dropped \d+ of the search records|dropped the \d+ oldest/);
    expect(server!.child.exitCode).toBeNull();
  }, 120_000);
});
