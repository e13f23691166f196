/**
 * Issue 6's figure: POST /api/v1/search latency (p50, p99) and throughput against the same SQL run directly with pg,
 * in one run, on the standard corpus (shared/bench: 100,000 articles, rare200 and common200 queries).
 *
 * - The corpus is generated once (node ../shared/bench/gen-corpus.cjs) and loaded into PostgreSQL database
 *   `quarry_bench` (created if missing; BENCH_PG_URL overrides) as articles(id primary key, title, body) with a GIN index
 *   on to_tsvector('english', title || ' ' || body). A table with the right row count is reused.
 * - Quarry runs as its own process with the result cache off (SEARCH_CACHE_TTL_MS=0) and a key whose limits are far
 *   above the load, so every request searches and none is refused; each request takes the next query of the set.
 * - "direct" runs the statement Quarry's builder makes for the same query (src/search) with a pg Pool of the same size
 *   as Quarry's (5), from the same load loop (node:http with keep-alive for Quarry), so the difference is Quarry:
 *   HTTP, auth, rate limit, validation, the read-only transaction around the statement, merging and JSON.
 * Latency is measured one request at a time with the two paths alternating on the same query (so both see the same
 * machine load); throughput with 8 concurrent clients, each path on its own. The HTTP floor is bare Koa answering the
 * same JSON as a real search, from the same client: the part of the overhead that any HTTP API pays here.
 *   npx tsx scripts/bench-search.ts [seconds per case]
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createExecutor } from '../src/connectors/index.js';
import { compileQuery, tableQueries } from '../src/search/queries.js';
import { loadSearchSchema } from '../src/search/schema-catalog.js';
import { chooseTargets } from '../src/search/targets.js';
import { ApiClient } from '../test/support/api-client.js';
import { createKey, registerUser } from '../test/support/factories.js';
import { liftKeyLimits } from './lib/bench.js';
import { freePort, spawnServer } from './lib/spawn-server.js';

const seconds = Number(process.argv[2] ?? 8);
const ROWS = 100_000;
const LIMIT = 20;
const POOL_SIZE = 5;
const MIN_PAIRS = 100;
const root = fileURLToPath(new URL('../', import.meta.url));
const benchUrl = new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/quarry_bench');
const corpusDir = join(tmpdir(), 'quarry-bench-corpus');

interface Queries {
  rare200: string[];
  common200: string[];
}

function corpus(): Queries {
  if (!existsSync(join(corpusDir, 'queries.json')) || !existsSync(join(corpusDir, 'articles.tsv'))) {
    console.log(`generating the corpus in ${corpusDir}`);
    execFileSync(process.execPath, [join(root, '../shared/bench/gen-corpus.cjs'), corpusDir], { stdio: 'inherit' });
  }
  return JSON.parse(readFileSync(join(corpusDir, 'queries.json'), 'utf8')) as Queries;
}

async function ensureDatabase(): Promise<void> {
  const admin = new pg.Client({ connectionString: Object.assign(new URL(benchUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const name = benchUrl.pathname.slice(1);
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  await admin.end();
}

/** Loads articles.tsv unless the table already holds it (unnest batches: pg has no COPY FROM STDIN without an add-on). */
async function ensureArticles(pool: pg.Pool): Promise<void> {
  const present = await pool.query("SELECT to_regclass('public.articles') IS NOT NULL AS present");
  if (present.rows[0].present) {
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM articles');
    const indexed = await pool.query("SELECT 1 FROM pg_indexes WHERE tablename = 'articles' AND indexname = 'articles_fts'");
    if (rows[0].n === ROWS && indexed.rowCount === 1) return;
  }
  console.log('loading 100,000 articles into PostgreSQL (once; later runs reuse the table)');
  await pool.query('DROP TABLE IF EXISTS articles');
  await pool.query('CREATE TABLE articles (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)');
  const lines = readFileSync(join(corpusDir, 'articles.tsv'), 'utf8').split('\n').filter(Boolean);
  for (let start = 0; start < lines.length; start += 5000) {
    const batch = lines.slice(start, start + 5000).map((line) => line.split('\t'));
    await pool.query('INSERT INTO articles (id, title, body) SELECT * FROM unnest($1::int[], $2::text[], $3::text[])', [
      batch.map((_, i) => start + i + 1), batch.map((b) => b[0]), batch.map((b) => b[1] ?? ''),
    ]);
  }
  await pool.query("CREATE INDEX articles_fts ON articles USING GIN (to_tsvector('english', title || ' ' || body))");
  // VACUUM as after any bulk load: hint bits and the visibility map set now, not during the first measured queries.
  await pool.query('VACUUM ANALYZE articles');
}

interface Measure {
  label: string;
  concurrency: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

function summary(label: string, concurrency: number, latencies: number[], seconds: number, failures: number): Measure {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { label, concurrency, requests: sorted.length, rps: Math.round(sorted.length / seconds), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), failures };
}

/**
 * One request at a time, alternating the two paths on the same query (direct, then Quarry), so both see the same
 * machine at the same moment; the per-pair difference is the overhead.
 */
async function latencyPair(name: string, a: (i: number) => Promise<boolean>, b: (i: number) => Promise<boolean>): Promise<[Measure, Measure, number]> {
  for (let i = 0; i < 100; i++) await Promise.all([a(i), b(i)]);
  const [la, lb, diffs]: number[][] = [[], [], []];
  let [fa, fb] = [0, 0];
  const started = performance.now();
  const end = started + seconds * 1000;
  // At least MIN_PAIRS pairs, however slow the queries (a common word takes ~100 ms), so the medians mean something.
  for (let i = 0; performance.now() < end || i < MIN_PAIRS; i++) {
    const t0 = performance.now();
    if (!(await a(i))) fa += 1;
    const t1 = performance.now();
    if (!(await b(i))) fb += 1;
    const t2 = performance.now();
    la.push(t1 - t0);
    lb.push(t2 - t1);
    diffs.push(t2 - t1 - (t1 - t0));
  }
  const elapsed = (performance.now() - started) / 1000;
  const half = elapsed / 2;
  return [summary(`pg direct, ${name}`, 1, la, half, fa), summary(`Quarry POST /search, ${name}`, 1, lb, half, fb), percentile(diffs.sort((x, y) => x - y), 0.5)];
}

/** `concurrency` workers calling `run` back to back for `seconds`, after a warm-up. */
async function throughput(label: string, concurrency: number, run: (i: number) => Promise<boolean>): Promise<Measure> {
  let next = 0;
  const warmUntil = performance.now() + 2000;
  while (performance.now() < warmUntil) await run(next++);
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await run(next++);
      latencies.push(performance.now() - t0);
      if (!ok) failures += 1;
    }
  }));
  return summary(label, concurrency, latencies, (performance.now() - started) / 1000, failures);
}

const queries = corpus();
await ensureDatabase();
const direct = new pg.Pool({ connectionString: benchUrl.toString(), max: POOL_SIZE });
await ensureArticles(direct);

// The statement Quarry builds, from the same discovery Quarry runs.
const executor = await createExecutor(
  { engine: 'postgres', host: benchUrl.hostname, port: Number(benchUrl.port || 5432), database: benchUrl.pathname.slice(1), username: decodeURIComponent(benchUrl.username || 'postgres'), password: decodeURIComponent(benchUrl.password), ssl: false, tables: null },
  { hostPolicy: { allowlist: [], allowPrivate: true, allowLoopback: true } },
);
const schema = await loadSearchSchema(executor, ['articles'], 10_000);
await executor.close();
const [target] = chooseTargets(schema, {});
if (!target?.index) throw new Error('articles has no usable GIN index');
const statementFor = (text: string) => tableQueries(target, compileQuery(text, 'natural').query, { quoteIdent: (n) => `"${n.replace(/"/g, '""')}"`, placeholder: (n) => `$${n}` })!.rank(LIMIT, { from: 0, to: LIMIT });

const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', SEARCH_CACHE_TTL_MS: '0', SEARCH_TIMEOUT_MS: '30000' }, { built: process.env.BENCH_TSX !== '1' });
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
try {
  const client = new ApiClient(server.url);
  const user = await registerUser(client);
  const key = await createKey(client, user, { rateLimitTier: 'enterprise', environment: 'test', permissions: ['search'] });
  await liftKeyLimits(`sqlite:${join(dataDir, 'quarry.sqlite')}`, key.id);
  const connection = await client.post('/api/v1/databases', {
    name: 'bench', engine: 'postgres', host: benchUrl.hostname, port: Number(benchUrl.port || 5432), database: benchUrl.pathname.slice(1),
    username: decodeURIComponent(benchUrl.username || 'postgres'), password: decodeURIComponent(benchUrl.password), environment: 'test', tables: ['articles'],
  }, { token: user.token });
  if (connection.status !== 201) throw new Error(`connection failed: ${JSON.stringify(connection.body)}`);
  const databaseId = connection.body.data.database.id as string;
  const check = await client.post('/api/v1/search', { query: queries.rare200[0], databases: [databaseId], limit: LIMIT }, { token: key.secret });
  if (check.status !== 200 || check.body.data.databases[0].status !== 'ok' || check.body.data.results.length === 0) {
    throw new Error(`the search does not work: ${JSON.stringify(check.body).slice(0, 500)}`);
  }

  /** One POST with this bench's client (node:http, keep-alive); true when 200 and the body holds `expect`. */
  const post = (url: string, body: string, headers: Record<string, string>, expect: string) => new Promise<boolean>((resolve) => {
    const req = request(url, {
      method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(res.statusCode === 200 && Buffer.concat(chunks).includes(expect)));
    });
    req.on('error', () => resolve(false));
    req.end(body);
  });
  const viaQuarry = (text: string) =>
    post(`${server.url}/api/v1/search`, JSON.stringify({ query: text, databases: [databaseId], limit: LIMIT }), { authorization: `Bearer ${key.secret}` }, '"status":"ok"');
  const viaPg = async (text: string) => {
    const statement = statementFor(text);
    await direct.query(statement.sql, statement.params);
    return true;
  };

  // The statement in a read-only transaction with a statement timeout, the plain way: BEGIN, statement, COMMIT, three
  // round trips. (Quarry's executor sends BEGIN with the statement and COMMITs after answering: one on the path.)
  const viaPgReadOnly = async (text: string) => {
    const statement = statementFor(text);
    const client = await direct.connect();
    try {
      await client.query('BEGIN READ ONLY; SET LOCAL statement_timeout = 30000');
      await client.query({ text: statement.sql, values: statement.params });
      await client.query('COMMIT');
      return true;
    } finally {
      client.release();
    }
  };

  // The HTTP floor: bare Koa answering this very search's JSON, no search behind it, from the same client code.
  const answerFile = join(dataDir, 'answer.json');
  writeFileSync(answerFile, JSON.stringify(check.body));
  const floorPort = await freePort();
  const floorServer = spawn(process.execPath, ['--import', 'tsx', 'scripts/lib/bare-koa.ts'], { cwd: root, env: { ...process.env, PORT: String(floorPort), BODY_FILE: answerFile }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => floorServer.stdout!.once('data', () => resolve()));
  const viaFloor = (text: string) => post(`http://127.0.0.1:${floorPort}/`, JSON.stringify({ query: text, databases: [databaseId], limit: LIMIT }), {}, '"success":true');
  // Measured like Quarry: alternating with the direct query, so it sees the same machine between requests.
  const [, floor] = await latencyPair('rare200', (i) => viaPg(queries.rare200[i % 200]!), (i) => viaFloor(queries.rare200[i % 200]!));
  floor.label = 'bare Koa answering the same JSON';
  floorServer.kill('SIGTERM');

  const rows: Array<[Measure, Measure, number | null]> = [];
  for (const [name, set] of [['rare200', queries.rare200], ['common200', queries.common200]] as const) {
    const query = (i: number) => set[i % set.length]!;
    rows.push(await latencyPair(name, (i) => viaPg(query(i)), (i) => viaQuarry(query(i))));
    if (name === 'rare200') {
      const [plain, readOnly, pairDiff] = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaPgReadOnly(query(i)));
      readOnly.label = `pg direct in a read-only transaction (BEGIN, statement, COMMIT), ${name}`;
      rows.push([plain, readOnly, pairDiff]);
    }
    const concurrency = 8;
    rows.push([
      await throughput(`pg direct, ${name}`, concurrency, (i) => viaPg(query(i))),
      await throughput(`Quarry POST /search, ${name}`, concurrency, (i) => viaQuarry(query(i))),
      null,
    ]);
  }

  console.log(`\nSearch on PostgreSQL, 100,000 articles with a GIN index, natural mode, limit ${LIMIT}, result cache off, ${seconds} s per case`);
  console.log(`(load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
  console.log('| case | concurrency | requests | req/s | p50 ms | p99 ms | failures | overhead at p50 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [pgRow, quarryRow, pairDiff] of rows) {
    for (const row of [pgRow, quarryRow]) {
      const overhead = row === quarryRow ? `${(quarryRow.p50 - pgRow.p50).toFixed(2)}${pairDiff !== null ? ` (median of pairs ${pairDiff.toFixed(2)})` : ''}` : '';
      console.log(`| ${row.label} | ${row.concurrency} | ${row.requests} | ${row.rps} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.failures} | ${overhead} |`);
    }
  }
  const single = rows.filter(([p, q]) => p.concurrency === 1 && q.label.startsWith('Quarry')).map(([p, q]) => q.p50 - p.p50);
  console.log(`\nHTTP floor, ${floor.label} (${Math.round(JSON.stringify(check.body).length / 1024)} KB), one request at a time, alternating with the direct query: p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms`);
  console.log(`overhead at p50, one request at a time: ${single[0]!.toFixed(2)} ms (rare200), ${single[1]!.toFixed(2)} ms (common200); target < 2 ms`);
} finally {
  agent.destroy();
  await direct.end();
  await server.stop();
}
