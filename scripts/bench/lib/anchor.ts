/**
 * The search-speed anchor: Quarry against Sphinx (Debian's sphinxsearch, bm25 ranker) on this machine, in
 * one run, on the same PostgreSQL table and the same queries; optionally Quarry at an older commit beside them.
 * `npm run bench:search` runs it after its per-engine part, `npm run bench:anchor` runs it alone.
 *
 * - Rows: the standard corpus (../shared/bench: 100,000 articles, table `articles`), or with `rows: 1_000_000` the
 *   corpus ten times over with ids offset by 100,000 per copy (table `articles_1m`, scripts/bench/lib/bench-corpus.ts).
 * - Each Quarry runs built, as `npm start` runs it, with the result cache and the rate limiter off, and the
 *   event-loop probe (scripts/bench/lib/loop-probe.mjs) preloaded; the table is connected and its first sync timed from
 *   the connection to the table being searchable. Sphinx's indexer reads the same table; its time is from its start
 *   to its exit. Each reports the index's bytes on disk. Each Quarry is measured once its log says the space's rows
 *   are held in memory (or too large to be), and their words counted where its version counts them (row-words.ts),
 *   as a server that has been running a while: the first sync's own reading is not part of a search's time.
 * - Three query sets, a new query for every request so no cache flatters a figure: verbose (8 words of a corpus row,
 *   any word may match), common (one of the corpus's 200 common words) and rare (two of its 200 rare words).
 *   Quarry answers from its index (natural mode, limit 10); Sphinx answers `w1 | w2 | ...` with limit 10.
 * - Latency at concurrency 1 takes turns query by query (who goes first rotates), so all see the machine alike;
 *   every Quarry answer's Server-Timing header is kept, to say where a search's time went. Throughput at
 *   concurrency 4 and 16 runs each system for a fixed number of requests, in rotating rounds; the median round is
 *   printed, with the p99 of all its requests.
 * - Quarry is asked over node:http with keep-alive connections (one for concurrency 1, one per caller otherwise), as
 *   Sphinx over its own protocol: the client shares the cores with the servers, and fetch cost it 2.5 times the CPU.
 * - A Quarry with `WORKERS` above 1 (`--compare-env WORKERS=2`) gets a PostgreSQL store of its own (dropped after) and
 *   Redis, as that setting needs; its workers' event loops are probed each (the worst printed), its rows counted held
 *   once every worker logged them, and its RSS is the sum of its processes'.
 * - The event loop's delay (p99, max) of each Quarry per phase; RSS (now and peak) of every server after the run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  articles, benchPgUrl, CORPUS_ROWS, ensureCorpus, ensurePostgresArticles, ensurePostgresDatabase, ensurePostgresMillion, MILLION_ROWS,
  MILLION_TABLE, verboseQueries,
} from './bench-corpus.js';
import { spawnServer, type ServerProcess } from '../../lib/spawn-server.js';
import { childPids, rssOf, treePeakRssOf, treeRssOf } from '../../lib/processes.js';
import { startSphinx } from './sphinx.js';
import { median, percentile } from './stats.js';
import { setAccount } from '../../lib/store-admin.js';
import { keepAliveAgent, postJson } from './http-post.js';
import type { Agent } from 'node:http';
import { freshPostgresDatabase, redisUrl } from '../../lib/stores.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const LOOP_PROBE = join(root, 'scripts/bench/lib/loop-probe.mjs');
const LIMIT = 10;
const WARMUP = 20;
const ROUNDS = 3;
const THROUGHPUT_REQUESTS = 200;
const SETS = ['verbose', 'common', 'rare'] as const;
type SetName = (typeof SETS)[number];

export interface AnchorOptions {
  /** Requests per query set at concurrency 1, after WARMUP. */
  requests: number;
  /** 100,000 (the corpus) or 1,000,000 (the corpus ten times). */
  rows: number;
  /** A git ref whose Quarry is measured beside the current one. */
  baseline?: string;
  /** Settings of more Quarry servers of this checkout measured beside the first (one server per entry). */
  compareEnv?: Array<Record<string, string>>;
}

export interface AnchorArgs extends AnchorOptions {
  anchorOnly: boolean;
  /**
   * `--index-uri`: instead of the other parts, Quarry with its index in a local folder against Quarry with its index
   * at this URI (an object store), in one run; `s3` starts s3rver on loopback behind the proxy that honours
   * conditional writes (scripts/lib/s3rver.ts).
   */
  indexUri?: string;
}

/**
 * `[requests] [--requests N] [--rows 100000|1000000] [--baseline <git ref>] [--anchor-only] [--index-uri s3|<uri>]
 * [--compare-env NAME=VALUE[,NAME=VALUE...]]...` (each `--compare-env`: one more Quarry of this checkout with these
 * settings, measured beside the first, taking turns with it).
 */
export function parseAnchorArgs(argv: string[], usage: string): AnchorArgs {
  const args: AnchorArgs = { requests: 200, rows: CORPUS_ROWS, anchorOnly: false };
  const fail = (why: string): never => {
    console.error(`${why}\nusage: ${usage} [--requests N (>= 20)] [--rows 100000|1000000] [--baseline <git ref>] [--anchor-only] [--index-uri s3|<uri>] [--compare-env NAME=VALUE[,NAME=VALUE...]]...`);
    process.exit(2);
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = () => argv[++i] ?? fail(`${arg} needs a value`);
    if (arg === '--anchor-only') args.anchorOnly = true;
    else if (arg === '--requests') args.requests = Number(value());
    else if (arg === '--rows') args.rows = Number(value());
    else if (arg === '--baseline') args.baseline = value();
    else if (arg === '--index-uri') args.indexUri = value();
    else if (arg === '--compare-env') {
      const pairs = value().split(',').map((pair) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair) ?? fail(`--compare-env takes NAME=VALUE pairs, not ${pair}`));
      (args.compareEnv ??= []).push(Object.fromEntries(pairs.map((m) => [m[1]!, m[2]!])));
    }
    else if (/^\d+$/.test(arg)) args.requests = Number(arg);
    else fail(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(args.requests) || args.requests < 20) fail('--requests must be an integer >= 20');
  if (args.rows !== CORPUS_ROWS && args.rows !== MILLION_ROWS) fail('--rows is 100000 or 1000000');
  return args;
}

/** The issue's targets for one row count. */
interface Targets {
  verboseX: number;
  /** Common and rare: at most this many times Sphinx's p50, or floorMs, whichever is larger. */
  otherX: number;
  floorMs: number;
  c4X: number | null;
  p99OverP50At16: number | null;
  rssMb: number | null;
}
const TARGETS: Record<number, Targets> = {
  [CORPUS_ROWS]: { verboseX: 2, otherX: 3, floorMs: 5, c4X: 0.5, p99OverP50At16: 10, rssMb: null },
  [MILLION_ROWS]: { verboseX: 1.5, otherX: 3, floorMs: 10, c4X: null, p99OverP50At16: null, rssMb: 600 },
};

/** One answer at concurrency 1: the client's time and, from Quarry, its Server-Timing stages. */
interface Sample {
  ms: number;
  stages: Record<string, number> | null;
}
type Searcher = (words: string[]) => Promise<void>;
interface LoopReading {
  p50: number;
  p99: number;
  max: number;
}

/** How long the object store's process may take to hold a 100,000-row space's rows (about 230 MB from the store). */
const ROWS_HELD_TIMEOUT_MS = 300_000;
/** Searches sent at once while waiting for a Quarry's rows to be held. */
const WARM_CALLERS = 4;

/**
 * What a Quarry's log says of its space's rows in memory: the last version it read that has rows (a space is logged
 * empty too, when it is made), and whether that version's words were counted since (null: not yet, or a checkout that
 * does not count them and `words` is false).
 */
function heldState(output: string, words: boolean, postings = false): string | null {
  let rows: { version: number; said: string } | null = null;
  let counted: string | null = null;
  let indexed: string | null = null;
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !(line.includes('"msg":"index row') || line.includes('"msg":"index postings'))) continue;
    const entry = JSON.parse(line) as { msg: string; version?: number; rows?: number };
    if (entry.msg === 'index rows too large to hold in memory') [rows, counted, indexed] = [{ version: entry.version!, said: 'rows too large to hold' }, 'no row words', 'no postings'];
    else if (entry.msg === 'index rows held in memory' && (entry.rows ?? 0) > 0) [rows, counted, indexed] = [{ version: entry.version!, said: 'rows held' }, null, null];
    else if (rows && entry.version === rows.version && entry.msg === 'index row words counted') counted = 'row words counted';
    else if (rows && entry.version === rows.version && entry.msg === 'index row words too large to hold in memory') [counted, indexed] = ['row words too large to hold', 'no postings'];
    else if (rows && entry.version === rows.version && entry.msg === 'index postings held in memory') indexed = 'postings held';
    else if (rows && entry.version === rows.version && entry.msg === 'index postings not held in memory') indexed = 'postings not held';
  }
  if (!rows) return null;
  if (!words) return rows.said;
  if (!counted) return null;
  if (!postings) return `${rows.said}, ${counted}`;
  return indexed ? `${rows.said}, ${counted}, ${indexed}` : null;
}

interface Contender {
  name: string;
  search(words: string[]): Promise<Sample>;
  /** `n` concurrent callers (Sphinx: a connection each) and how to let them go. */
  callers(n: number): Promise<{ searchers: Searcher[]; close(): Promise<void> }>;
  /** The event loop's delay since the previous reading (Quarry only). */
  loop(): Promise<LoopReading | null>;
  /** bytes: null for an index that is not in a local folder. */
  index: { seconds: number; bytes: number | null };
  pid: number;
  /** The processes that answer searches: a Quarry's workers (WORKERS > 1), else its one process. */
  servingPids(): number[];
  /** What the server logged so far (Quarry only). */
  output?(): string;
  /** Whether its version counts its rows' words once held (row-words.ts), to wait for them too. */
  countsWords?: boolean;
  /** Whether its version builds the postings of its rows once held (postings.ts), to wait for them too. */
  buildsPostings?: boolean;
  stop(): Promise<void>;
}

/** `plan;dur=0.6, rank;dur=5.2, ...` as { plan: 0.6, rank: 5.2, ... }. */
export function parseServerTiming(header: string | null): Record<string, number> | null {
  if (!header) return null;
  const stages: Record<string, number> = {};
  for (const entry of header.split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([\d.]+)\s*$/.exec(p)?.[1]).find((d) => d !== undefined);
    if (name && dur !== undefined) stages[name] = Number(dur);
  }
  return stages;
}

/** Bytes of every file below a folder. */
export function treeBytes(dir: string): number {
  let sum = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    sum += entry.isDirectory() ? treeBytes(path) : statSync(path).size;
  }
  return sum;
}

/**
 * scripts/bench/lib/loop-probe.mjs's reading: SIGUSR2 to each serving process, then each one's next
 * `LOOP-PROBE {json}` line on stderr; of several workers, the worst of each figure.
 */
async function readLoopProbe(server: ServerProcess, pids: number[]): Promise<LoopReading> {
  const seen = server.output().length;
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 20) {
    const lines = [...server.output().slice(seen).matchAll(/LOOP-PROBE (\{.*\})/g)].map((m) => JSON.parse(m[1]!) as LoopReading);
    if (lines.length >= pids.length) {
      return { p50: Math.max(...lines.map((l) => l.p50)), p99: Math.max(...lines.map((l) => l.p99)), max: Math.max(...lines.map((l) => l.max)) };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the event-loop probe did not answer');
}

/** A Quarry server (this checkout, or `cwd`'s) with one account, one key and the table synced. */
async function startQuarry(name: string, table: string, pgUrl: URL, cwd?: string, given: Record<string, string> = {}): Promise<Contender> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-anchor-'));
  // Several workers share a PostgreSQL store and Redis (README: WORKERS): a store of its own for this run.
  const store = Number(given.WORKERS ?? 1) > 1 && !given.DATABASE_URL ? await freshPostgresDatabase() : null;
  const env: Record<string, string> = { ...(store && { DATABASE_URL: store.url, REDIS_URL: given.REDIS_URL ?? redisUrl }), ...given };
  const storeUrl = env.DATABASE_URL ?? `sqlite:${join(dataDir, 'quarry.sqlite')}`;
  // LOG_LEVEL info, the server's default: its log says when a space's rows are held (untilRowsHeld), and it writes
  // an access line per request as `npm start` does.
  const server = await spawnServer(
    { DATA_DIR: dataDir, RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0', NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    { built: true, cwd, nodeArgs: ['--import', LOOP_PROBE] },
  );
  const servingPids = () => (Number(env.WORKERS ?? 1) > 1 ? childPids(server.child.pid!) : [server.child.pid!]);
  try {
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method, headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() as { data: any } };
    };
    const email = `anchor-${Date.now()}@example.com`;
    const registered = await call('POST', '/api/v1/auth/register', null, { email, password: 'correct-horse-42', name: 'anchor' });
    await setAccount(storeUrl, email, { plan: 'enterprise' });
    const token = registered.body.data.tokens.accessToken as string;
    const key = (await call('POST', '/api/v1/keys', token, { name: 'anchor', environment: 'live', permissions: ['search'], rateLimitTier: 'enterprise' })).body.data.secretKey as string;

    const connectedAt = performance.now();
    const created = await call('POST', '/api/v1/databases', token, {
      name: 'Articles', engine: 'postgres', environment: 'live', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1),
      username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), tables: [table],
    });
    if (created.status !== 201) throw new Error(`${name} connect: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.data.database.id as string;
    for (;;) {
      const state = (await call('GET', `/api/v1/databases/${id}/index/tables/${table}`, token)).body.data;
      if (state.job?.status === 'failed') throw new Error(`${name} sync failed: ${JSON.stringify(state.job)}`);
      if (state.state === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (performance.now() - connectedAt) / 1000;

    // One connection for the searches one at a time; each set of concurrent callers gets connections of its own.
    const searchOn = (agent: Agent) => async (words: string[]): Promise<Sample> => {
      const t0 = performance.now();
      const res = await postJson(agent, `${server.url}/api/v1/search`, { query: words.join(' '), databases: [id], limit: LIMIT }, { authorization: `Bearer ${key}` });
      const ms = performance.now() - t0;
      const body = res.body as { data?: { databases: Array<{ source: string }> } };
      if (res.status !== 200 || body.data?.databases[0]?.source !== 'index') throw new Error(`${name} search: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      const timing = res.headers['server-timing'];
      return { ms, stages: parseServerTiming(typeof timing === 'string' ? timing : null) };
    };
    const single = keepAliveAgent(1);
    const search = searchOn(single);
    return {
      name,
      search,
      callers: async (n) => {
        const agent = keepAliveAgent(n);
        const searchOnAgent = searchOn(agent);
        return { searchers: Array.from({ length: n }, () => async (words: string[]) => void (await searchOnAgent(words))), close: async () => agent.destroy() };
      },
      loop: () => readLoopProbe(server, servingPids()),
      index: { seconds, bytes: env.INDEX_URI ? null : treeBytes(join(dataDir, 'index')) },
      pid: server.child.pid!,
      servingPids,
      output: () => server.output(),
      // A checkout that counts its rows' words (row-words.ts) is measured once they are counted, as a server that has run a while.
      countsWords: existsSync(join(cwd ?? process.cwd(), 'src/search-index/row-words.ts')),
      buildsPostings: existsSync(join(cwd ?? process.cwd(), 'src/search-index/postings.ts')),
      async stop() {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
        await store?.drop();
      },
    };
  } catch (error) {
    // A server that died says why in its last words.
    console.error(`${name}: ${server.child.exitCode ?? server.child.signalCode ?? 'running'}; its last output:\n${server.output().slice(-3000)}`);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await store?.drop();
    throw error;
  }
}

/**
 * Searches `contender` (queries from `queries`, none measured) until its log says the space's rows are in memory
 * (or too large for it), and their words counted where its version counts them (row-words.ts).
 */
async function untilRowsHeld(contender: Contender, queries: string[][]): Promise<string> {
  const started = performance.now();
  // Several callers on connections of their own, so that they reach several workers (a cluster hands out connections).
  const { searchers, close } = await contender.callers(WARM_CALLERS);
  try {
    for (let i = 0; performance.now() - started < ROWS_HELD_TIMEOUT_MS; i += WARM_CALLERS) {
      // Each worker logs its own holding (pino's pid); all must have held theirs. One process logs no pid.
      const output = contender.output?.() ?? '';
      const linesOf = (pid: number) => (pid === contender.pid ? output : output.split('\n').filter((line) => line.includes(`"pid":${pid},`)).join('\n'));
      const states = contender.servingPids().map((pid) => heldState(linesOf(pid), contender.countsWords === true, contender.buildsPostings === true));
      if (states.every((said) => said !== null)) return `${states[0]} after ${((performance.now() - started) / 1000).toFixed(1)} s of searches`;
      await Promise.all(searchers.map((search, k) => search(queries[(i + k) % queries.length]!)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await close();
  }
  throw new Error(`${contender.name}: its rows were not held in memory within ${ROWS_HELD_TIMEOUT_MS / 1000} s:\n${contender.output?.().slice(-2000)}`);
}

/** Sphinx indexing the same table, as a contender. */
async function startSphinxContender(table: string, pgUrl: URL): Promise<Contender> {
  const sphinx = await startSphinx(pgUrl, table);
  return {
    name: 'Sphinx',
    search: async (words) => {
      const t0 = performance.now();
      await sphinx.search(words, LIMIT);
      return { ms: performance.now() - t0, stages: null };
    },
    // One connection per caller, opened one after another (searchd drops handshakes that arrive all at once).
    callers: async (n) => {
      const connections: Array<Awaited<ReturnType<typeof sphinx.connect>>> = [];
      for (let i = 0; i < n; i += 1) connections.push(await sphinx.connect());
      return {
        searchers: connections.map((c) => async (words: string[]) => void (await c.search(words, LIMIT))),
        close: async () => void (await Promise.all(connections.map((c) => c.close()))),
      };
    },
    loop: async () => null,
    index: { seconds: sphinx.indexed.seconds, bytes: sphinx.indexed.bytes },
    pid: sphinx.pid,
    servingPids: () => [sphinx.pid],
    stop: () => sphinx.stop(),
  };
}

/**
 * A checkout of `ref` in a temporary git worktree (node_modules linked from this one), for its Quarry to be built
 * and run there; `remove` takes it away again. The process's exit by a signal removes it too.
 */
export function checkoutBaseline(ref: string): { dir: string; commit: string; remove(): void } {
  const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const parent = mkdtempSync(join(tmpdir(), 'quarry-baseline-'));
  const dir = join(parent, commit);
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  let removed = false;
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    try {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    } catch {
      // removed below; prune forgets it
    }
    rmSync(parent, { recursive: true, force: true });
    execFileSync('git', ['worktree', 'prune'], { cwd: root, stdio: 'ignore' });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'));
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, commit, remove };
}

/** `count` requests through concurrent callers, each taking the next query; searches/s and sorted latencies. */
async function drive(searchers: Searcher[], queries: string[][], count: number): Promise<{ perSecond: number; times: number[] }> {
  let next = 0;
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(searchers.map(async (search) => {
    for (let i = next++; i < count; i = next++) {
      const t0 = performance.now();
      await search(queries[i % queries.length]!);
      times.push(performance.now() - t0);
    }
  }));
  return { perSecond: count / ((performance.now() - started) / 1000), times: times.sort((a, b) => a - b) };
}

/** Contenders in the order of turn `i`: the list rotated, so each goes first as often as the others. */
const rotated = <T>(list: T[], i: number): T[] => list.map((_, k) => list[(i + k) % list.length]!);

const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');

/** Runs the anchor and prints its tables. */
export async function runAnchor(options: AnchorOptions): Promise<void> {
  const { requests, rows } = options;
  const targets = TARGETS[rows]!;
  const table = rows === MILLION_ROWS ? MILLION_TABLE : 'articles';
  const corpus = ensureCorpus();
  const corpusRows = articles();
  const pgUrl = benchPgUrl();
  await ensurePostgresDatabase(pgUrl);
  const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 2 });
  await ensurePostgresArticles(pool, () => corpusRows);
  await pool.end();
  if (rows === MILLION_ROWS) await ensurePostgresMillion(pgUrl);

  const total = WARMUP + requests;
  const sets: Record<SetName, string[][]> = {
    verbose: verboseQueries(corpusRows, total).map((query) => query.split(' ')),
    common: Array.from({ length: total }, (_, i) => [corpus.common200[i % corpus.common200.length]!]),
    rare: Array.from({ length: total }, (_, i) => [corpus.rare200[(2 * i) % corpus.rare200.length]!, corpus.rare200[(2 * i + 1) % corpus.rare200.length]!]),
  };

  const contenders: Contender[] = [];
  let baseline: ReturnType<typeof checkoutBaseline> | null = null;
  try {
    // One sync at a time, so neither slows the other's.
    contenders.push(await startQuarry('Quarry', table, pgUrl));
    if (options.baseline) {
      baseline = checkoutBaseline(options.baseline);
      console.log(`baseline: ${options.baseline} (${baseline.commit}) in ${baseline.dir}`);
      contenders.push(await startQuarry(`Quarry ${baseline.commit}`, table, pgUrl, baseline.dir));
    }
    for (const env of options.compareEnv ?? []) {
      contenders.push(await startQuarry(`Quarry ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`, table, pgUrl, undefined, env));
    }
    const sphinx = await startSphinxContender(table, pgUrl);
    contenders.push(sphinx);
    const quarries = contenders.filter((c) => c !== sphinx);

    // Each Quarry is measured with its space's rows held in memory, as a server that has run a while.
    for (const q of quarries) console.log(`${q.name}: ${await untilRowsHeld(q, sets.verbose)}`);
    const latency: string[] = [];
    const throughput: string[] = [];
    const breakdown: string[] = [];
    const loops: string[] = [];
    const loopLine = (phase: string, name: string, p99s: number[], maxes: number[]) => loops.push(`| ${phase} | ${name} | ${fixed(median(p99s), 2)} | ${fixed(Math.max(...maxes), 2)} |`);
    for (const setName of SETS) {
      const queries = sets[setName];
      const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
      for (const q of quarries) await q.loop(); // start the probe's window here
      for (const [i, words] of queries.entries()) {
        for (const contender of rotated(contenders, i)) {
          const sample = await contender.search(words);
          if (i >= WARMUP) samples.get(contender)!.push(sample);
        }
      }
      for (const q of quarries) {
        const reading = (await q.loop())!;
        loopLine(`${setName}, c=1`, q.name, [reading.p99], [reading.max]);
      }
      const sorted = new Map([...samples].map(([c, list]) => [c, list.map((s) => s.ms).sort((a, b) => a - b)]));
      const p50 = (c: Contender) => percentile(sorted.get(c)!, 0.5);
      const sphinxP50 = p50(sphinx);
      for (const c of contenders) {
        const times = sorted.get(c)!;
        let target = '';
        if (c !== sphinx) {
          const bound = setName === 'verbose' ? targets.verboseX * sphinxP50 : Math.max(targets.otherX * sphinxP50, targets.floorMs);
          const said = setName === 'verbose' ? `<= ${targets.verboseX} x` : `<= ${targets.otherX} x or ${targets.floorMs} ms`;
          target = `${said}: ${verdict(p50(c) <= bound)}`;
        }
        latency.push(`| ${setName} | ${c.name} | ${fixed(p50(c))} | ${fixed(percentile(times, 0.99))} | ${c === sphinx ? '1.00' : fixed(p50(c) / sphinxP50, 2)} | ${target} |`);
      }
      // Where the time went: medians over this set's requests that carried a Server-Timing with rank (the cache is off).
      for (const q of quarries) {
        const timed = samples.get(q)!.filter((s) => s.stages?.rank !== undefined && s.stages.total !== undefined);
        if (timed.length === 0) {
          breakdown.push(`| ${setName} | ${q.name} | ${fixed(median(samples.get(q)!.map((s) => s.ms)))} | no Server-Timing | - | - | - | - | - | - | 0 |`);
          continue;
        }
        const m = (f: (s: Record<string, number>, ms: number) => number) => fixed(median(timed.map((s) => f(s.stages!, s.ms))));
        const stage = (s: Record<string, number>, name: string) => s[name] ?? 0;
        breakdown.push(`| ${setName} | ${q.name} | ${m((_, ms) => ms)} | ${m((s) => s.total!)} | ${m((s) => stage(s, 'engine'))} | ${m((s) => s.rank! - stage(s, 'engine'))} | ${m((s) => stage(s, 'plan'))} | ${m((s) => stage(s, 'details'))} | ${m((s) => s.total! - stage(s, 'plan') - s.rank! - stage(s, 'details'))} | ${m((s, ms) => ms - s.total!)} | ${timed.length} |`);
      }

      for (const concurrency of [4, 16]) {
        const callers = new Map<Contender, Awaited<ReturnType<Contender['callers']>>>();
        for (const c of contenders) callers.set(c, await c.callers(concurrency));
        const rounds = new Map<Contender, Array<{ perSecond: number; times: number[] }>>(contenders.map((c) => [c, []]));
        const loopRounds = new Map<Contender, LoopReading[]>(quarries.map((q) => [q, []]));
        for (let round = 0; round < ROUNDS; round += 1) {
          for (const c of rotated(contenders, round)) {
            // Each Quarry's loop is read over its own round only, not over the others' rounds while it idles.
            await c.loop();
            rounds.get(c)!.push(await drive(callers.get(c)!.searchers, queries, THROUGHPUT_REQUESTS));
            const reading = await c.loop();
            if (reading) loopRounds.get(c)!.push(reading);
          }
        }
        for (const c of contenders) await callers.get(c)!.close();
        const perSecond = (c: Contender) => median(rounds.get(c)!.map((r) => r.perSecond));
        const p99 = (c: Contender) => percentile(rounds.get(c)!.flatMap((r) => r.times).sort((a, b) => a - b), 0.99);
        for (const c of contenders) {
          let target = '';
          if (c !== sphinx && concurrency === 4 && targets.c4X !== null) target = `>= ${targets.c4X} x: ${verdict(perSecond(c) >= targets.c4X * perSecond(sphinx))}`;
          if (c !== sphinx && concurrency === 16 && targets.p99OverP50At16 !== null) {
            const bound = targets.p99OverP50At16 * p50(c);
            target = `p99 <= ${targets.p99OverP50At16} x p50 (${bound.toFixed(0)} ms): ${verdict(p99(c) <= bound)}`;
          }
          throughput.push(`| ${setName} | ${concurrency} | ${c.name} | ${fixed(perSecond(c))} | ${fixed(p99(c))} | ${c === sphinx ? '1.00' : fixed(perSecond(c) / perSecond(sphinx), 2)} | ${target} |`);
        }
        for (const q of quarries) {
          const readings = loopRounds.get(q)!;
          loopLine(`${setName}, c=${concurrency}`, q.name, readings.map((r) => r.p99), readings.map((r) => r.max));
        }
      }
      console.log(`${setName}: done`);
    }

    const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
    const rowCount = rows.toLocaleString('en');
    console.log(`\nThe anchor: Quarry against Sphinx 2.2 (bm25 ranker), same machine, same PostgreSQL table (${table}, ${rowCount} rows), limit ${LIMIT}, a new query per request`);
    console.log(`\n| index | rows/s | seconds | index on disk MB | RSS after the run MB | peak RSS MB |${targets.rssMb === null ? '' : ' target |'}`);
    console.log(`|---|---|---|---|---|---|${targets.rssMb === null ? '' : '---|'}`);
    for (const c of contenders) {
      const rss = treeRssOf(c.pid);
      const rssTarget = targets.rssMb === null ? '' : c === sphinx ? ' |' : ` RSS <= ${targets.rssMb} MB: ${verdict(rss <= targets.rssMb * 1048576)} |`;
      console.log(`| ${c.name} | ${Math.round(rows / c.index.seconds)} | ${c.index.seconds.toFixed(1)} | ${c.index.bytes === null ? '-' : mb(c.index.bytes)} | ${mb(rss)} | ${mb(treePeakRssOf(c.pid))} |${rssTarget}`);
    }
    console.log(`\nLatency at concurrency 1, ${requests} queries per set after ${WARMUP} warm-up, taking turns (ms)\n`);
    console.log('| set | system | p50 | p99 | p50 / Sphinx | target |');
    console.log('|---|---|---|---|---|---|');
    for (const line of latency) console.log(line);
    console.log(`\nThroughput, ${THROUGHPUT_REQUESTS} requests a round, median of ${ROUNDS} rotating rounds (searches/s; p99 ms over all rounds)\n`);
    console.log('| set | concurrency | system | searches/s | p99 | / Sphinx | target |');
    console.log('|---|---|---|---|---|---|---|');
    for (const line of throughput) console.log(line);
    console.log('\nWhere a search\'s time goes, concurrency 1, medians per set (ms; from each answer\'s Server-Timing): engine = the index\'s ranking queries; Quarry\'s index work = rank - engine (typo checks, heading weights, merge); other service work = total - (plan + rank + details); HTTP etc. = client - total (HTTP, authentication, validation)\n');
    console.log('| set | system | client | total | engine | Quarry\'s index work | plan | details | other service work | HTTP, auth, validation | requests |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const line of breakdown) console.log(line);
    console.log('\nEvent-loop delay of each Quarry (monitorEventLoopDelay, ms beyond its 10 ms timer): c=1 over the set\'s latency phase; c=4 and c=16 over that Quarry\'s own rounds, p99 the median of the rounds\', max over all rounds\n');
    console.log('| phase | system | p99 | max |');
    console.log('|---|---|---|---|');
    for (const line of loops) console.log(line);
  } finally {
    for (const c of contenders.reverse()) await c.stop().catch((error: unknown) => console.error(`${c.name} stop: ${(error as Error).message}`));
    baseline?.remove();
  }
}

/** The issue's target for the index on object storage: its p50 at most this many times the local folder's. */
const OBJECT_STORE_X = 1.3;

/**
 * Quarry with its index in a local folder against Quarry with its index at `indexUri`, both built
 * and as `npm start` runs them, the same PostgreSQL table synced into each, the anchor's three query sets at
 * concurrency 1 taking turns query by query (who goes first rotates). Prints each set's p50 and p99, the ratio and
 * the target, and where the object-store Quarry's time went (Server-Timing) beside the local one's.
 */
export async function runObjectStoreComparison(options: { requests: number; rows: number; indexUri: string }): Promise<void> {
  const { requests, rows } = options;
  const table = rows === MILLION_ROWS ? MILLION_TABLE : 'articles';
  const corpus = ensureCorpus();
  const corpusRows = articles();
  const pgUrl = benchPgUrl();
  await ensurePostgresDatabase(pgUrl);
  const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 2 });
  await ensurePostgresArticles(pool, () => corpusRows);
  await pool.end();
  if (rows === MILLION_ROWS) await ensurePostgresMillion(pgUrl);
  const total = WARMUP + requests;
  const sets: Record<SetName, string[][]> = {
    verbose: verboseQueries(corpusRows, total).map((query) => query.split(' ')),
    common: Array.from({ length: total }, (_, i) => [corpus.common200[i % corpus.common200.length]!]),
    rare: Array.from({ length: total }, (_, i) => [corpus.rare200[(2 * i) % corpus.rare200.length]!, corpus.rare200[(2 * i + 1) % corpus.rare200.length]!]),
  };

  let s3: { url: string; close(): Promise<void>; requests: Array<{ method: string; path: string; range?: string | null }> } | null = null;
  let env: Record<string, string>;
  let where: string;
  if (options.indexUri === 's3') {
    const { startS3rver, S3RVER_CREDENTIALS } = await import('../../lib/s3rver.js');
    s3 = await startS3rver('quarry-bench');
    env = {
      INDEX_URI: `s3://quarry-bench/index-${Date.now()}`, INDEX_S3_ENDPOINT: s3.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, INDEX_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    };
    where = `s3rver on loopback behind the conditional-write proxy (${env.INDEX_URI})`;
  } else {
    // Any other URI: its settings come from this environment (INDEX_S3_*, INDEX_GCS_*, INDEX_AZURE_*, INDEX_ALLOW_HTTP).
    env = { INDEX_URI: options.indexUri };
    where = options.indexUri;
  }
  const contenders: Contender[] = [];
  try {
    // Both log at info, as a server does by default: the object store's says when its rows are held in memory.
    contenders.push(await startQuarry('local folder', table, pgUrl, undefined, { LOG_LEVEL: 'info' }));
    contenders.push(await startQuarry('object store', table, pgUrl, undefined, { ...env, LOG_LEVEL: 'info' }));
    const [local, remote] = contenders as [Contender, Contender];
    // Each process reads a version's rows into memory in the background after its first search of it (row-cache.ts),
    // then builds its postings; until then its searches read rows from the index. The comparison is of the steady
    // state, so it starts once both servers say the rows are held (or too large to hold, when that is the steady
    // state), the local folder's as well: else it would measure one Quarry ranking in memory against one asking LanceDB.
    for (const c of contenders) console.log(`${c.name}: ${await untilRowsHeld(c, sets.verbose)}`);
    const lines: string[] = [];
    const breakdown: string[] = [];
    const storeReads: string[] = [];
    for (const setName of SETS) {
      const samples = new Map<Contender, Sample[]>(contenders.map((c) => [c, []]));
      // What the object store's searches ask of the store (s3rver counts them): GETs of the table's data pages and
      // of everything else (the indexes, manifests), per measured search.
      const reads = { data: 0, other: 0 };
      // Which objects (and byte ranges) those GETs asked for, most asked first: what no cache kept.
      const objects = new Map<string, number>();
      for (const [i, words] of sets[setName].entries()) {
        for (const contender of rotated(contenders, i)) {
          const before = s3?.requests.length ?? 0;
          const sample = await contender.search(words);
          if (i < WARMUP) continue;
          samples.get(contender)!.push(sample);
          if (contender !== remote || !s3) continue;
          for (const r of s3.requests.slice(before)) {
            if (r.method !== 'GET') continue;
            reads[r.path.includes('/data/') ? 'data' : 'other']++;
            const object = `${r.path.replace(/\?.*$/, '').split('/').slice(-3).join('/')} ${r.range ?? ''}`.trim();
            objects.set(object, (objects.get(object) ?? 0) + 1);
          }
        }
      }
      const most = [...objects].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([object, n]) => `${object} (${n})`).join('; ');
      if (s3) storeReads.push(`| ${setName} | ${fixed(reads.data / requests, 1)} | ${fixed(reads.other / requests, 1)} | ${most || '-'} |`);
      const sorted = (c: Contender) => samples.get(c)!.map((s) => s.ms).sort((a, b) => a - b);
      const p50 = (c: Contender) => percentile(sorted(c), 0.5);
      const ratio = p50(remote) / p50(local);
      lines.push(`| ${setName} | ${fixed(p50(local))} | ${fixed(percentile(sorted(local), 0.99))} | ${fixed(p50(remote))} | ${fixed(percentile(sorted(remote), 0.99))} | ${fixed(ratio, 2)} | <= ${OBJECT_STORE_X} x: ${verdict(ratio <= OBJECT_STORE_X)} |`);
      for (const c of contenders) {
        const timed = samples.get(c)!.filter((s) => s.stages?.total !== undefined);
        const m = (f: (s: Record<string, number>) => number) => fixed(median(timed.map((s) => f(s.stages!))));
        breakdown.push(`| ${setName} | ${c.name} | ${fixed(median(samples.get(c)!.map((s) => s.ms)))} | ${m((s) => s.total!)} | ${m((s) => s.engine ?? 0)} | ${m((s) => (s.rank ?? 0) - (s.engine ?? 0))} | ${m((s) => s.details ?? 0)} | ${timed.length} |`);
      }
      console.log(`${setName}: done`);
    }
    console.log(`\nSearch from a local index folder against the same index on ${where}: ${rows.toLocaleString('en')} rows (${table}), limit ${LIMIT}, ${requests} queries per set after ${WARMUP} warm-up, concurrency 1, taking turns (ms)\n`);
    console.log('| index | rows/s of the first sync | seconds | on disk MB |');
    console.log('|---|---|---|---|');
    for (const c of contenders) console.log(`| ${c.name} | ${Math.round(rows / c.index.seconds)} | ${c.index.seconds.toFixed(1)} | ${c.index.bytes === null ? '-' : (c.index.bytes / 1048576).toFixed(1)} |`);
    console.log('\n| set | local p50 | local p99 | object store p50 | object store p99 | object store / local | target |');
    console.log('|---|---|---|---|---|---|---|');
    for (const line of lines) console.log(line);
    console.log('\nWhere the time goes, medians (ms; Server-Timing): engine = the index\'s ranking queries, index work = rank - engine, details = reading the page\'s rows\n');
    console.log('| set | index | client | total | engine | index work | details | requests |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const line of breakdown) console.log(line);
    console.log(`\nRSS after the searches: local folder ${fixed(rssOf(local.pid) / 1048576)} MB, object store ${fixed(rssOf(remote.pid) / 1048576)} MB`);
    const prewarmed = [...(remote.output?.() ?? '').matchAll(/"cachedMb":(\d+),"ms":(\d+),"msg":"index prewarmed"/g)].at(-1);
    if (prewarmed) console.log(`\nobject store: LanceDB's caches held ${prewarmed[1]} MB once the last version's indexes were loaded (in ${prewarmed[2]} ms)`);
    if (storeReads.length > 0) {
      console.log('\nThe object store\'s GET requests per measured search (data: the table\'s pages; other: indexes, manifests)\n');
      console.log('| set | data | other | most asked (object, byte range, GETs) |');
      console.log('|---|---|---|---|');
      for (const line of storeReads) console.log(line);
    }
  } finally {
    for (const c of contenders.reverse()) await c.stop().catch((error: unknown) => console.error(`${c.name} stop: ${(error as Error).message}`));
    await s3?.close();
  }
}
