/**
 * `npm run bench`: throughput of Quarry's authenticated reads as ratios to bare Koa, all measured in this
 * one run on this machine. Each server runs in its own process; autocannon drives it from this one (16 connections).
 *   bare Koa                        a Koa app answering a small JSON body: the baseline, measured again every round
 *   Koa + openapi-backend + jose    reference: GET /api/v1/auth/profile routed and validated by openapi-backend on
 *                                   openapi.yaml with a JWT verified by jose, a no-op handler, nothing else
 *   GET /rate-limit/status          API key: key checked, limiter read (the operation is exempt), the key's last day
 *   GET /search/history?limit=1     API key: key checked, rate-limited (window, burst, concurrency), query validated,
 *                                   usage recorded; the page holds one real search record
 *   GET /auth/profile               JWT: token verified, session and user checked, the profile with its database ids
 * The target: each of the last three at 0.15 of bare Koa or more. Quarry runs as `npm start` runs it (dist/, built
 * first), on SQLite, with memory limits and LOG_LEVEL=silent; the key has limits far above what the bench sends.
 *   npx tsx scripts/bench/throughput.ts [seconds per case] [rounds]
 */
import { median } from './lib/stats.js';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { ApiClient } from '../lib/api-client.js';
import { createKey, registerUser } from '../lib/accounts.js';
import { onSqlite } from '../lib/seed-databases.js';
import { liftKeyLimits, setAccount } from '../lib/store-admin.js';
import { load, printTable, type LoadResult } from './lib/load.js';
import { spawnServer, startScript } from '../lib/spawn-server.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);
const TARGET = 0.15;

/** Quarry with a user, a key and one recorded search over a SQLite FTS5 connection. */
async function startQuarry() {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  const server = await spawnServer(env, { built: true });
  const client = new ApiClient(server.url);
  const user = await registerUser(client);
  // The account's own SQLite folder (what uploadSqliteFile fills), written directly: a benchmark's set-up.
  await onSqlite(join(dataDir, 'sqlite', user.id), 'bench.db', [
    'CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    "CREATE VIRTUAL TABLE articles_fts USING fts5(title, body, content='articles', content_rowid='id')",
    "INSERT INTO articles (id, title, body) VALUES (1, 'The river report', 'A story about the river and the market.')",
    "INSERT INTO articles_fts(articles_fts) VALUES ('rebuild')",
  ]);
  const key = await createKey(client, user, { permissions: ['search', 'analytics'] });
  // Far above what the bench sends: the key's own limits, and its account's plan (a plan bounds the requests of all
  // of an account's keys together, 100,000 an hour on enterprise).
  await liftKeyLimits(`sqlite:${join(dataDir, 'quarry.sqlite')}`, key.id);
  await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, user.email, { plan: 'enterprise' });
  const database = await client.post('/api/v1/databases', { name: 'bench', engine: 'sqlite', database: 'bench.db', environment: 'test' }, { token: user.token });
  if (database.status !== 201) throw new Error(`the SQLite connection failed: ${JSON.stringify(database.body)}`);
  const keyAuth = { authorization: `Bearer ${key.secret}` };
  const searched = await client.post('/api/v1/search', { query: 'river report', limit: 10 }, { headers: keyAuth });
  if (searched.status !== 200) throw new Error(`the warm-up search failed: ${JSON.stringify(searched.body)}`);
  for (let waited = 0; ; waited += 100) {
    const history = await client.get('/api/v1/search/history?limit=1', { headers: keyAuth });
    if ((history.body as { data: { total: number } }).data.total > 0) break;
    if (waited > 15_000) throw new Error('the warm-up search never reached the search history');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { server, keyAuth, jwtAuth: { authorization: `Bearer ${user.token}` }, env };
}

/**
 * The same server started again on its data: its rate-limit windows are in its memory, and a fast machine spends the
 * account's hour (a plan bounds all of an account's keys together, 100,000 requests an hour on enterprise) in one
 * round, so each round after the first runs on a fresh start of the same store, user and key.
 */
async function restartQuarry(previous: Awaited<ReturnType<typeof startQuarry>>): Promise<Awaited<ReturnType<typeof startQuarry>>> {
  await previous.server.stop();
  return { ...previous, server: await spawnServer(previous.env, { built: true }) };
}

const referenceSecret = randomBytes(32).toString('base64url');
const referenceToken = await new SignJWT({ typ: 'access', sid: 'ses_bench' })
  .setProtectedHeader({ alg: 'HS256' }).setSubject('usr_bench').setIssuer('quarry').setAudience('quarry-api')
  .setIssuedAt().setExpirationTime('2h').sign(new TextEncoder().encode(referenceSecret));

const bare = await startScript('scripts/bench/lib/bare-koa.ts');
const reference = await startScript('scripts/bench/lib/contract-koa.ts', { JWT_SECRET: referenceSecret });
let quarry = await startQuarry();

/** Measured in this order every round, right after bare Koa; `target` marks the cases the issue's figure is about. */
const casesOf = (url: string): Array<{ label: string; url: string; headers: Record<string, string>; target?: true }> => [
  { label: 'Koa + openapi-backend + jose (reference: contract and a JWT, no store)', url: `${reference.url}/api/v1/auth/profile`, headers: { authorization: `Bearer ${referenceToken}` } },
  { label: 'GET /rate-limit/status (API key)', url: `${url}/api/v1/rate-limit/status`, headers: quarry.keyAuth, target: true },
  { label: 'GET /search/history?limit=1 (API key)', url: `${url}/api/v1/search/history?limit=1`, headers: quarry.keyAuth, target: true },
  { label: 'GET /auth/profile (JWT)', url: `${url}/api/v1/auth/profile`, headers: quarry.jwtAuth, target: true },
];
const cases = casesOf(quarry.server.url);

// The machine's speed drifts between minutes, so each round measures bare Koa again and each ratio is taken within
// its round; the verdict reads the median ratio of each case over the rounds.
try {
  const measured: Array<{ baseline: LoadResult; rows: LoadResult[] }> = [];
  for (let round = 1; round <= rounds; round++) {
    if (round > 1) quarry = await restartQuarry(quarry);
    const baseline = await load('bare Koa', `${bare.url}/`, { seconds });
    const rows: LoadResult[] = [];
    for (const c of casesOf(quarry.server.url)) rows.push(await load(c.label, c.url, { seconds, headers: c.headers }));
    const failed = rows.filter((row) => row.non2xx > 0);
    if (failed.length > 0) throw new Error(`answers other than 2xx in round ${round}: ${failed.map((row) => `${row.label} ${row.non2xx}`).join(', ')}`);
    measured.push({ baseline, rows });
    console.log(`round ${round}: bare Koa ${baseline.requestsPerSecond} req/s; ${rows.map((row) => `${row.label} ${(row.requestsPerSecond / baseline.requestsPerSecond).toFixed(3)}`).join('; ')}`);
  }
  const ratios = cases.map((_, i) => measured.map((m) => m.rows[i]!.requestsPerSecond / m.baseline.requestsPerSecond));
  const medians = ratios.map(median);
  // The table shows the round whose ratios are closest to the medians (least total distance).
  const distance = (m: (typeof measured)[number]) => m.rows.reduce((sum, row, i) => sum + Math.abs(row.requestsPerSecond / m.baseline.requestsPerSecond - medians[i]!), 0);
  const shown = [...measured].sort((a, b) => distance(a) - distance(b))[0]!;
  printTable(`Quarry's authenticated reads against bare Koa (the round nearest the medians of ${rounds}, ${seconds} s per case, 16 connections, built server, SQLite store, memory limits)`, shown.baseline, shown.rows);
  console.log(`\nratio to bare Koa, median of ${rounds} rounds (each round's in brackets), target ${TARGET}:`);
  let allMet = true;
  cases.forEach((c, i) => {
    const met = medians[i]! >= TARGET;
    if (c.target) allMet &&= met;
    const verdict = c.target ? (met ? 'met' : 'NOT met') : 'reference';
    console.log(`  ${c.label}: ${medians[i]!.toFixed(3)} (${ratios[i]!.map((r) => r.toFixed(3)).join(', ')}) ${verdict}`);
  });
  console.log(allMet ? `every target case reaches ${TARGET} of bare Koa` : `some target case is below ${TARGET} of bare Koa`);
} finally {
  bare.stop();
  reference.stop();
  await quarry.server.stop();
}
