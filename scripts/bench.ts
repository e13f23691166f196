/**
 * `npm run bench` (issue 9): throughput and latency of Quarry's request paths as ratios to bare Koa, all measured
 * in this one run on this machine. Each server runs in its own process; autocannon drives it from this one.
 *   bare Koa                 a Koa app answering a small JSON body (the ceiling); again with Quarry's response
 *                            batching (src/http/response-batching.ts), to show it does not speed up a server that
 *                            is not the bottleneck (the ratio stays against plain bare Koa)
 *   Koa in Quarry's shape    bare Koa answering with Quarry's headers and envelope, no work behind them
 *   Koa + openapi-backend    the same small body, routed and validated by openapi-backend on openapi.yaml (what the mandated
 *                            contract machinery costs on its own), and again with its router and validator
 *                            called directly (the floor of any use of openapi-backend)
 *   GET /health              public route through the whole pipeline (contract routing, validation, envelope)
 *   key-authenticated GET    GET /api/v1/search/history?limit=1 with an API key: key verified, rate-limited
 *                            (window, burst, concurrency), query validated, usage recorded; the page (one real
 *                            search record: the user searches once before round 1) comes from the per-user
 *                            history cache (the user does not search during the case)
 *   ... reading the store    the same with the offset cycling through 50 pages, more than the cache keeps per user,
 *                            so every request misses it and reads its page from the store (SQLite via Sequelize)
 *   ... without batching     the key-authenticated GET on a second Quarry with RESPONSE_BATCHING=false
 *   GET /health with key     the key verified and the limiter read, no store read (auth and limits without I/O)
 *   search                   POST /api/v1/search over a SQLite FTS5 table, the query varied per request
 *   npx tsx scripts/bench.ts [seconds per case] [rounds]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../test/support/api-client.js';
import { createKey, registerUser } from '../test/support/factories.js';
import { onSqlite } from '../test/support/seed-databases.js';
import { liftKeyLimits, load, printTable, type LoadResult } from './lib/bench.js';
import { spawnServer, startScript } from './lib/spawn-server.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);
const root = fileURLToPath(new URL('../', import.meta.url));

const words = ['river', 'market', 'engine', 'garden', 'signal', 'winter', 'castle', 'library', 'doctor', 'storm', 'silver', 'harbor'];

/** Quarry as `npm start` runs it (the compiled dist/, built first), with a key and a SQLite FTS5 connection. */
async function startQuarry(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', ...env }, { built: true });
  const client = new ApiClient(server.url);
  const user = await registerUser(client);
  // The account's own SQLite folder (what uploadSqliteFile fills), written directly: a benchmark's set-up.
  await onSqlite(join(dataDir, 'sqlite', user.id), 'bench.db', [
    'CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    "CREATE VIRTUAL TABLE articles_fts USING fts5(title, body, content='articles', content_rowid='id')",
    ...Array.from({ length: 200 }, (_, i) => `INSERT INTO articles (id, title, body) VALUES (${i + 1}, 'The ${words[i % 12]} report ${i}', 'A story about the ${words[(i * 7) % 12]} and the ${words[(i * 5) % 12]} near the ${words[(i * 3) % 12]}.')`),
    "INSERT INTO articles_fts(articles_fts) VALUES ('rebuild')",
  ]);
  const key = await createKey(client, user, { permissions: ['search', 'analytics'] });
  await liftKeyLimits(`sqlite:${join(dataDir, 'quarry.sqlite')}`, key.id);
  const database = await client.post('/api/v1/databases', { name: 'bench', engine: 'sqlite', database: 'bench.db', environment: 'test' }, { token: user.token });
  if (database.status !== 201) throw new Error(`the SQLite connection failed: ${JSON.stringify(database.body)}`);
  const auth = { authorization: `Bearer ${key.secret}` };
  // The key GET reads this user's search history, and the search case of every round adds to it: searched once
  // before round 1 too, so that every round's history page holds a real record, not an empty first round.
  const searched = await client.post('/api/v1/search', { query: 'river report', limit: 10 }, { headers: auth });
  if (searched.status !== 200) throw new Error(`the warm-up search failed: ${JSON.stringify(searched.body)}`);
  for (let waited = 0; ; waited += 100) {
    const history = await client.get('/api/v1/search/history?limit=1', { headers: auth });
    if ((history.body as { data: { total: number } }).data.total > 0) break;
    if (waited > 15_000) throw new Error('the warm-up search never reached the search history');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { server, auth };
}

const bare = await startScript('scripts/lib/bare-koa.ts');
const bareBatched = await startScript('scripts/lib/bare-koa.ts', { BATCHING: '1' });
const shaped = await startScript('scripts/lib/bare-koa.ts', { QUARRY_SHAPE: '1' });
const contractOnly = await startScript('scripts/lib/contract-koa.ts');
const contractLean = await startScript('scripts/lib/contract-koa.ts', { CONTRACT_MODE: 'lean' });
execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
const quarry = await startQuarry();
const quarryUnbatched = await startQuarry({ RESPONSE_BATCHING: 'false' });
const url = quarry.server.url;
let n = 0;
type LoadOptions = Parameters<typeof load>[2];
/** Measured in this order every round; `keyGet` marks the case the issue's target is about, `batchedBare` its stricter baseline. */
const cases: Array<{ label: string; url: string; options?: LoadOptions; keyGet?: true; batchedBare?: true }> = [
  { label: 'bare Koa writing its responses as Quarry does (RESPONSE_BATCHING)', url: `${bareBatched.url}/`, batchedBare: true },
  { label: "Koa answering in Quarry's shape (X-Request-Id, X-RateLimit-*, envelope), no work", url: `${shaped.url}/` },
  { label: 'Koa + openapi-backend only (routing and validation on openapi.yaml, GET /health, no-op handler)', url: `${contractOnly.url}/health` },
  { label: 'Koa + openapi-backend router and validator called directly (GET /health, no handler)', url: `${contractLean.url}/health` },
  { label: 'GET /health', url: `${url}/health` },
  { label: 'key-authenticated GET (rate-limited, validated)', url: `${url}/api/v1/search/history?limit=1`, options: { headers: quarry.auth }, keyGet: true },
  {
    label: 'the same GET reading the store (offset cycles through 50 pages: no cache hit)',
    url: `${url}/api/v1/search/history?limit=1`,
    options: { headers: quarry.auth, path: () => `/api/v1/search/history?limit=1&offset=${n++ % 50}` },
  },
  {
    label: 'the key-authenticated GET with RESPONSE_BATCHING=false (each response written at once)',
    url: `${quarryUnbatched.server.url}/api/v1/search/history?limit=1`,
    options: { headers: quarryUnbatched.auth },
  },
  { label: 'GET /health with the API key (key verified, limiter read, no store read)', url: `${url}/health`, options: { headers: quarry.auth } },
  {
    label: 'POST /api/v1/search (query varies)',
    url: `${url}/api/v1/search`,
    options: {
      method: 'POST',
      headers: { ...quarry.auth, 'content-type': 'application/json' },
      body: () => JSON.stringify({ query: `${words[n++ % 12]} ${words[(n * 5) % 12]} ${n}`, limit: 10 }),
    },
  },
];
const KEY_GET = cases.findIndex((c) => c.keyGet);
const BATCHED_BARE = cases.findIndex((c) => c.batchedBare);

// The machine is noisy (its speed drifts between minutes), so every round measures bare Koa again right before the
// Quarry cases, and each ratio is taken within its round; the table shows the round with the median key-GET ratio.
try {
  const measured: Array<{ baseline: LoadResult; rows: LoadResult[] }> = [];
  for (let round = 1; round <= rounds; round++) {
    const baseline = await load('bare Koa', `${bare.url}/`, { seconds });
    const rows: LoadResult[] = [];
    for (const c of cases) rows.push(await load(c.label, c.url, { seconds, ...c.options }));
    measured.push({ baseline, rows });
    const ratios = rows.map((row) => (row.requestsPerSecond / baseline.requestsPerSecond).toFixed(2));
    console.log(`round ${round}: bare Koa ${baseline.requestsPerSecond} req/s; ratios ${cases.map((c, i) => `${c.label} ${ratios[i]}`).join(', ')}`);
  }
  const keyRatio = (m: { baseline: LoadResult; rows: LoadResult[] }) => m.rows[KEY_GET]!.requestsPerSecond / m.baseline.requestsPerSecond;
  const sorted = [...measured].sort((a, b) => keyRatio(a) - keyRatio(b));
  const median = sorted[Math.floor(sorted.length / 2)]!;
  printTable(`Quarry request paths against bare Koa (median of ${rounds} rounds, ${seconds} s per case, 16 connections, built server, SQLite store, memory limits)`, median.baseline, median.rows);
  console.log(`\nkey-authenticated GET reaches ${keyRatio(median).toFixed(2)} x bare Koa throughput (median of ${rounds} rounds; target 0.5)`);
  // The stricter reading: against bare Koa that also writes its responses a turn at a time, so the ratio holds only
  // what Quarry's own work costs, whatever batching is worth on this machine.
  const batchedRatios = measured.map((m) => m.rows[KEY_GET]!.requestsPerSecond / m.rows[BATCHED_BARE]!.requestsPerSecond);
  const batchedMedian = [...batchedRatios].sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
  console.log(`against bare Koa with the same response batching: ${batchedMedian.toFixed(2)} (median; rounds ${batchedRatios.map((r) => r.toFixed(2)).join(', ')})`);
} finally {
  bare.stop();
  bareBatched.stop();
  shaped.stop();
  contractOnly.stop();
  contractLean.stop();
  await quarry.server.stop();
  await quarryUnbatched.server.stop();
}
