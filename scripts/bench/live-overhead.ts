/**
 * What the live path adds to its SQL: POST /api/v1/search with `live: true` (the table searched by PostgreSQL's own
 * full-text search, not Quarry's index) latency (p50, p99) and throughput against the same SQL run directly with pg,
 * in one run, on the standard corpus (shared/bench: 100,000 articles, rare200 and common200 queries).
 *
 * - The corpus is generated once (node ../shared/bench/gen-corpus.cjs) and loaded into PostgreSQL database
 *   `quarry_bench` (created if missing; BENCH_PG_URL overrides) as articles(id primary key, title, body) with a GIN index
 *   on to_tsvector('english', title || ' ' || body). A table with the right row count is reused. The database is set
 *   to plan without parallel workers (BENCH_PG_PARALLEL_WORKERS=server keeps PostgreSQL's setting; see below why).
 * - Quarry runs as its own process with the result cache off (SEARCH_CACHE_TTL_MS=0) and a key whose limits are far
 *   above the load, so every request searches and none is refused; each request takes the next query of the set.
 * - "direct" runs the statement Quarry's builder makes for the same query (src/sql-search) with a pg Pool of the same size
 *   as Quarry's (5), from the same load loop (node:http with keep-alive for Quarry), so the difference is Quarry:
 *   HTTP, auth, rate limit, validation, the read-only transaction around the statement, merging and JSON.
 * Latency is measured one request at a time with the two paths back to back on the same query (so both see the same
 * machine load), in alternating order (latencyPair says why), after WARMUP searches on each path; throughput with 8
 * concurrent clients, each path on its own. The overhead at p50 is the median of the per-pair differences (the
 * difference of the two p50s is printed too); each comes with its 95% bootstrap interval, and the target counts as
 * met only when the whole interval is under 2 ms. Two floors, from the same client: bare Koa answering the same JSON
 * as a real search (what any HTTP answer costs here), and the proxy floor (scripts/bench/lib/search-proxy-floor.ts: Koa +
 * koa-bodyparser + pg running the same SQL, what any Node search API in front of the database costs here). A design
 * check measures the direct path against itself through a second pool in the same way: a path that adds nothing
 * should come out at about 0, so it shows how far the design itself can move a figure.
 * The idle case runs the rare words again with IDLE_MS of nothing before each request (Quarry and the proxy floor):
 * on a virtual machine a process woken after a long wait runs its code slower for a while (caches cold, the vCPU
 * rescheduled), and a common word's long query is exactly such a wait, so this row separates what the wait costs
 * from what a common word's rows cost.
 * With BENCH_PROBE=1 the server also runs scripts/bench/lib/stage-probe.mjs, and each query set's line adds the
 * server's own time around the query (medians, request start to first byte to PostgreSQL, last byte from it to the
 * response's finish) during the Quarry pairs: the probe touches every socket write, so use it to see where the
 * time goes, not for the headline figure.
 *   npx tsx scripts/bench/live-overhead.ts [seconds per case] [pairs at least per query set]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient } from '../lib/api-client.js';
import { createKey, registerUser } from '../lib/accounts.js';
import { liftKeyLimits } from '../lib/store-admin.js';
import { articles, benchPgUrl, ensureCorpus, ensurePostgresArticles, ensurePostgresDatabase } from './lib/bench-corpus.js';
import { benchStatementBuilder } from './lib/bench-statement.js';
import { spawnServer, startScript } from '../lib/spawn-server.js';
import { median, percentile } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 8);
/**
 * Pairs measured at least per query set, however slow the queries. A common word's query varies by about 10 ms from
 * one run to the next on this machine, so 200 pairs leave its median's 95% interval 2 to 3 ms wide; more narrow it.
 */
const minPairs = Number(process.argv[3] ?? 200);
if (!(seconds > 0) || !Number.isInteger(minPairs) || minPairs < 10) {
  console.error('usage: npx tsx scripts/bench/live-overhead.ts [seconds per case > 0] [pairs at least per query set, >= 10]');
  process.exit(2);
}
const ROWS = 100_000;
const LIMIT = 20;
const POOL_SIZE = 5;
/**
 * The idle case's pause before each request: about a common word's query time here (80 to 100 ms), during which
 * Quarry, the proxy floor and the load generator all wait. IDLE_PAIRS caps its pairs (each costs two pauses).
 */
const IDLE_MS = 80;
const IDLE_PAIRS = 400;
/** Fewest pairs a verdict on the target is drawn from. */
const MIN_JUDGED_PAIRS = 100;
/** Searches each path serves before anything is measured: the server's code optimised, its pools and caches filled. */
const WARMUP = 1000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const probing = process.env.BENCH_PROBE === '1';
const benchUrl = benchPgUrl();
/**
 * PostgreSQL's max_parallel_workers_per_gather for the bench database, set on the database so that every path's
 * connections (pg direct, Quarry, the proxy floor) plan alike: 0 by default, `server` leaves PostgreSQL's own setting.
 * On a 2-vCPU machine that also runs the load generator and the servers, a common word's parallel plan is slower and
 * its back-to-back runs differ far more (scripts/bench/pg-parallel.ts, three runs on 2026-11-25: median query 96.0
 * to 103.3 ms with two workers against 84.6 to 88.9 without; median absolute deviation of the pair differences 3.51
 * to 5.59 ms against 1.14 to 2.24): the workers fight the processes being measured, so with them the intervals
 * measure PostgreSQL's scheduling more than Quarry.
 */
const parallelWorkers = process.env.BENCH_PG_PARALLEL_WORKERS ?? '0';
if (parallelWorkers !== 'server' && !/^\d+$/.test(parallelWorkers)) {
  console.error(`BENCH_PG_PARALLEL_WORKERS must be a whole number of workers or "server", not "${parallelWorkers}"`);
  process.exit(2);
}


async function ensureDatabase(): Promise<void> {
  await ensurePostgresDatabase(benchUrl);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(benchUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const quoted = `"${benchUrl.pathname.slice(1).replace(/"/g, '""')}"`;
  // Before any path connects: a database's settings apply to the sessions opened after them.
  await admin.query(parallelWorkers === 'server'
    ? `ALTER DATABASE ${quoted} RESET max_parallel_workers_per_gather`
    : `ALTER DATABASE ${quoted} SET max_parallel_workers_per_gather = ${Number(parallelWorkers)}`);
  await admin.end();
}

interface Measure {
  label: string;
  /** Every request's latency (ms), for the intervals. */
  latencies: number[];
  concurrency: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}


function summary(label: string, concurrency: number, latencies: number[], seconds: number, failures: number): Measure {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { label, latencies: sorted, concurrency, requests: sorted.length, rps: Math.round(sorted.length / seconds), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), failures };
}

/** A pair of paths measured one request at a time: both rows, and the per-pair differences (b - a, ms). */
interface Paired {
  a: Measure;
  b: Measure;
  diffs: number[];
}

/**
 * 95% percentile-bootstrap interval of a statistic (2,000 resamples, a fixed seed so reruns on the same figures print
 * the same interval). It says how far the machine's noise could have moved the figure: a target is met only when the
 * whole interval is under it.
 */
function interval(statistic: (resample: (values: number[]) => number[]) => number): [number, number] {
  let seed = 0x9e3779b9;
  const random = () => ((seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
  const resample = (values: number[]) => values.map(() => values[Math.floor(random() * values.length)]!);
  const estimates = Array.from({ length: 2000 }, () => statistic(resample)).sort((x, y) => x - y);
  return [percentile(estimates, 0.025), percentile(estimates, 0.975)];
}
/** The overhead at p50 (p50 of b - p50 of a) and the median of the pairs' differences, each with its interval. */
function overhead({ a, b, diffs }: Paired) {
  return {
    p50: b.p50 - a.p50,
    p50Interval: interval((r) => median(r(b.latencies)) - median(r(a.latencies))),
    pairs: median(diffs),
    pairsInterval: interval((r) => median(r(diffs))),
  };
}
const range = ([low, high]: [number, number]) => `${low.toFixed(2)} to ${high.toFixed(2)}`;

/**
 * One request at a time, the two paths on the same query back to back, so both see the same machine at the same
 * moment; the per-pair difference (b - a) is the overhead. The order alternates from pair to pair (a then b, then b
 * then a): on this machine the second of two runs of the same common-word query is the slower one (pg direct against
 * itself through two pools, in a fixed order: medians of 0.45 to 1.68 ms over four runs of 200 pairs), and a fixed
 * order would charge that to b. The design check row shows what is left of it with the alternating order.
 */
async function latencyPair(
  name: string,
  a: (i: number) => Promise<boolean>,
  b: (i: number) => Promise<boolean>,
  onMeasuring?: () => Promise<unknown>,
  idle: { pauseMs: number; pairs: number } = { pauseMs: 0, pairs: minPairs },
): Promise<Paired> {
  for (let i = 0; i < 100; i++) await Promise.all([a(i), b(i)]);
  await onMeasuring?.();
  const [la, lb, diffs]: number[][] = [[], [], []];
  let [fa, fb] = [0, 0];
  const timed = async (path: (i: number) => Promise<boolean>, i: number) => {
    if (idle.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, idle.pauseMs));
    const t0 = performance.now();
    const ok = await path(i);
    return { ms: performance.now() - t0, ok };
  };
  const started = performance.now();
  const end = started + seconds * 1000;
  // At least minPairs pairs, however slow the queries (a common word takes ~100 ms), so the medians mean something.
  for (let i = 0; performance.now() < end || i < idle.pairs; i++) {
    let ra, rb;
    if (i % 2 === 0) {
      ra = await timed(a, i);
      rb = await timed(b, i);
    } else {
      rb = await timed(b, i);
      ra = await timed(a, i);
    }
    if (!ra.ok) fa += 1;
    if (!rb.ok) fb += 1;
    la.push(ra.ms);
    lb.push(rb.ms);
    diffs.push(rb.ms - ra.ms);
  }
  const elapsed = (performance.now() - started) / 1000;
  const half = elapsed / 2;
  return { a: summary(`pg direct, ${name}`, 1, la, half, fa), b: summary(`Quarry POST /search, ${name}`, 1, lb, half, fb), diffs };
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

const queries = ensureCorpus();
await ensureDatabase();
const direct = new pg.Pool({ connectionString: benchUrl.toString(), max: POOL_SIZE });
/** The design check's second path: the same direct query through a pool of its own (its own server processes). */
const directTwin = new pg.Pool({ connectionString: benchUrl.toString(), max: POOL_SIZE });
await ensurePostgresArticles(direct, articles);

// The statement Quarry builds, from the same discovery Quarry runs.
const buildStatement = await benchStatementBuilder(benchUrl);
const statementFor = (text: string) => buildStatement(text, LIMIT);

const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const server = await spawnServer({
  DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', SEARCH_CACHE_TTL_MS: '0', SEARCH_TIMEOUT_MS: '30000',
  // The probe tells the database's sockets by their port.
  ...(probing ? { BENCH_PG_PORT: benchUrl.port || '5432' } : {}),
}, {
  built: process.env.BENCH_TSX !== '1',
  nodeArgs: probing ? ['--import', join(root, 'scripts/bench/lib/stage-probe.mjs')] : [],
});
/** scripts/bench/lib/stage-probe.mjs's medians over the requests since its last reading. */
interface ProbeFigures {
  requests: number;
  beforeQueryMs: number;
  afterRowsMs: number;
}
/** The probe's figures since the last call (it prints them on SIGUSR2), or null without BENCH_PROBE=1. */
const probeReading = async (): Promise<ProbeFigures | null> => {
  if (!probing) return null;
  const seen = server.output().length;
  server.child.kill('SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 50) {
    const line = /STAGE-PROBE (\{.*\})/.exec(server.output().slice(seen));
    if (line) return JSON.parse(line[1]!);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the stage probe did not answer');
};
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
  const check = await client.post('/api/v1/search', { query: queries.rare200[0], databases: [databaseId], limit: LIMIT, live: true }, { token: key.secret });
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
    post(`${server.url}/api/v1/search`, JSON.stringify({ query: text, databases: [databaseId], limit: LIMIT, live: true }), { authorization: `Bearer ${key.secret}` }, '"status":"ok"');
  const viaPgPool = async (pool: pg.Pool, text: string) => {
    const statement = statementFor(text);
    await pool.query(statement.sql, statement.params);
    return true;
  };
  const viaPg = (text: string) => viaPgPool(direct, text);

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

  // Both paths warmed the same way before anything is measured, so the figures are of a running service, not of
  // its first requests (V8 optimises a function after some thousands of calls; the request path has hundreds).
  for (let i = 0; i < WARMUP; i++) {
    await viaPg(queries.rare200[i % 200]!);
    await viaQuarry(queries.rare200[i % 200]!);
  }

  // The HTTP floor: bare Koa answering this very search's JSON, no search behind it, from the same client code.
  const answerFile = join(dataDir, 'answer.json');
  writeFileSync(answerFile, JSON.stringify(check.body));
  const floorServer = await startScript('scripts/bench/lib/bare-koa.ts', { BODY_FILE: answerFile });
  const viaFloor = (text: string) => post(`${floorServer.url}/`, JSON.stringify({ query: text, databases: [databaseId], limit: LIMIT, live: true }), {}, '"success":true');
  // Measured like Quarry: alternating with the direct query, so it sees the same machine between requests.
  const floor = (await latencyPair('rare200', (i) => viaPg(queries.rare200[i % 200]!), (i) => viaFloor(queries.rare200[i % 200]!))).b;
  floor.label = 'bare Koa answering the same JSON';
  floorServer.stop();

  // The proxy floor (scripts/bench/lib/search-proxy-floor.ts): the same SQL through the thinnest Koa search proxy.
  const proxyServer = await startScript('scripts/bench/lib/search-proxy-floor.ts', { BENCH_PG_URL: benchUrl.toString(), POOL_SIZE: String(POOL_SIZE) });
  const viaProxy = (text: string) => post(`${proxyServer.url}/`, JSON.stringify({ query: text, databases: [databaseId], limit: LIMIT, live: true }), {}, '"status":"ok"');
  for (let i = 0; i < WARMUP; i++) await viaProxy(queries.rare200[i % 200]!);

  interface Row {
    direct: Measure;
    other: Measure;
    paired: Paired | null;
  }
  const rows: Row[] = [];
  /** Per query set, what the closing lines read: Quarry, the proxy floor and the design check against pg direct. */
  const verdicts: Record<string, { quarry: Paired; proxy: Paired; check: Paired; probe: ProbeFigures | null }> = {};
  let idleCase: { quarry: Paired; proxy: Paired } | null = null;
  for (const [name, set] of [['rare200', queries.rare200], ['common200', queries.common200]] as const) {
    const query = (i: number) => set[i % set.length]!;
    const quarry = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaQuarry(query(i)), probeReading);
    const probe = await probeReading();
    rows.push({ direct: quarry.a, other: quarry.b, paired: quarry });
    const proxy = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaProxy(query(i)));
    proxy.b.label = `proxy floor: Koa + koa-bodyparser + pg running the same SQL, ${name}`;
    rows.push({ direct: proxy.a, other: proxy.b, paired: proxy });
    // The design check: a path that adds nothing (the same query through a second pool) must come out at about 0.
    const check = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaPgPool(directTwin, query(i)));
    check.b.label = `design check: pg direct through a second pool, ${name}`;
    verdicts[name] = { quarry, proxy, check, probe };
    rows.push({ direct: check.a, other: check.b, paired: check });
    if (name === 'rare200') {
      // The idle case: the same rare words, each request after IDLE_MS of nothing, about as long as a common word's
      // query keeps every process but PostgreSQL's waiting. It tells the cost of the wait from the cost of the rows.
      const pause = { pauseMs: IDLE_MS, pairs: Math.min(minPairs, IDLE_PAIRS) };
      const idleQuarry = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaQuarry(query(i)), undefined, pause);
      const idleProxy = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaProxy(query(i)), undefined, pause);
      for (const [paired, label] of [[idleQuarry, 'Quarry POST /search'], [idleProxy, 'proxy floor']] as const) {
        paired.a.label = `pg direct, ${name} after ${IDLE_MS} ms idle`;
        paired.b.label = `${label}, ${name} after ${IDLE_MS} ms idle`;
        rows.push({ direct: paired.a, other: paired.b, paired });
      }
      idleCase = { quarry: idleQuarry, proxy: idleProxy };
      const readOnly = await latencyPair(name, (i) => viaPg(query(i)), (i) => viaPgReadOnly(query(i)));
      readOnly.b.label = `pg direct in a read-only transaction (BEGIN, statement, COMMIT), ${name}`;
      rows.push({ direct: readOnly.a, other: readOnly.b, paired: readOnly });
    }
    const concurrency = 8;
    rows.push({
      direct: await throughput(`pg direct, ${name}`, concurrency, (i) => viaPg(query(i))),
      other: await throughput(`Quarry POST /search, ${name}`, concurrency, (i) => viaQuarry(query(i))),
      paired: null,
    });
  }
  proxyServer.stop();

  console.log(`\nSearch on PostgreSQL, 100,000 articles with a GIN index, natural mode, limit ${LIMIT}, result cache off, ${seconds} s per case (at least ${minPairs} pairs per query set, in alternating order), after ${WARMUP} warm-up searches per path, PostgreSQL parallel workers per query: ${parallelWorkers}`);
  console.log(`(load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; intervals: 95% bootstrap)`);
  console.log('| case | concurrency | requests | req/s | p50 ms | p99 ms | failures | overhead at p50 ms [interval] | median of pair differences ms [interval] |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const { direct: directRow, other, paired } of rows) {
    const figures = paired ? overhead(paired) : null;
    for (const row of [directRow, other]) {
      const cells = row !== other
        ? ['', '']
        : figures
          ? [`${figures.p50.toFixed(2)} [${range(figures.p50Interval)}]`, `${figures.pairs.toFixed(2)} [${range(figures.pairsInterval)}]`]
          : [(other.p50 - directRow.p50).toFixed(2), ''];
      console.log(`| ${row.label} | ${row.concurrency} | ${row.requests} | ${row.rps} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.failures} | ${cells.join(' | ')} |`);
    }
  }
  console.log(`\nHTTP floor, ${floor.label} (${Math.round(JSON.stringify(check.body).length / 1024)} KB), one request at a time, alternating with the direct query: p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms`);
  // The verdict reads the median of the per-pair overheads: the p50 of what Quarry adds to the same query at the same
  // moment. The difference of the two p50s is printed too, but it subtracts two medians of different queries' times
  // (a common word's varies by tens of ms), so its interval is too wide to settle a 2 ms target either way.
  for (const name of ['rare200', 'common200']) {
    const { probe, ...paired } = verdicts[name]!;
    const quarry = overhead(paired.quarry);
    const proxy = overhead(paired.proxy);
    const check = overhead(paired.check);
    // A bootstrap interval of a few pairs is far narrower than the spread it stands for: no verdict from a smoke run.
    const verdict = paired.quarry.diffs.length < MIN_JUDGED_PAIRS
      ? `not judged (fewer than ${MIN_JUDGED_PAIRS} pairs)`
      : quarry.pairsInterval[1] < 2 ? 'met' : quarry.pairsInterval[0] >= 2 ? 'not met' : 'not settled (the interval spans 2 ms)';
    console.log(
      `${name}: Quarry's overhead at p50 (median of pairs) ${quarry.pairs.toFixed(2)} ms [${range(quarry.pairsInterval)}], target < 2 ms: ${verdict}; ` +
        `difference of the p50s ${quarry.p50.toFixed(2)} ms [${range(quarry.p50Interval)}]; the proxy floor's ${proxy.pairs.toFixed(2)} ms [${range(proxy.pairsInterval)}], ` +
        `so Quarry's own work is ${(quarry.pairs - proxy.pairs).toFixed(2)} ms of it; ` +
        `the design check (a path that adds nothing) ${check.pairs.toFixed(2)} ms [${range(check.pairsInterval)}]`,
    );
    if (name === 'rare200' && idleCase) {
      const idleQuarry = overhead(idleCase.quarry);
      const idleProxy = overhead(idleCase.proxy);
      console.log(
        `  rare200 after ${IDLE_MS} ms idle before each request: Quarry's overhead ${idleQuarry.pairs.toFixed(2)} ms [${range(idleQuarry.pairsInterval)}], ` +
          `the proxy floor's ${idleProxy.pairs.toFixed(2)} ms [${range(idleProxy.pairsInterval)}] (without the pause: ${quarry.pairs.toFixed(2)} and ${proxy.pairs.toFixed(2)}): ` +
          'what the wait alone adds, with the rows of a rare word',
      );
    }
    if (probe) {
      console.log(
        `  stage probe, ${name}: over ${probe.requests} Quarry requests the server spent ${probe.beforeQueryMs.toFixed(2)} ms from the request to the query ` +
          `and ${probe.afterRowsMs.toFixed(2)} ms from the last row to the response's finish (medians), ${(probe.beforeQueryMs + probe.afterRowsMs).toFixed(2)} ms in all`,
      );
    }
  }
} finally {
  agent.destroy();
  await direct.end();
  await directTwin.end();
  await server.stop();
}
