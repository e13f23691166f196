/**
 * The full-sync figures: how fast a table's first sync into Quarry's index runs at 100,000 and at 1,000,000
 * rows, and how much disk it leaves, against Sphinx's indexer reading the same PostgreSQL table in the same run.
 *
 * - Rows: the standard corpus (../shared/bench, table `articles`) and, with `--rows 1000000`, also the corpus ten
 *   times over (`articles_1m`), loaded into PostgreSQL as scripts/bench/lib/bench-corpus.ts does for every benchmark.
 * - Each Quarry runs built, as `npm start` runs it (scripts/lib/spawn-server.ts), in a fresh data folder, one sync at
 *   a time; the table is connected by a new account and timed from the connection to the table being searchable
 *   (as the anchor times it): rows per second of the whole first sync, text only, no vectors. Then the index
 *   folder's bytes on disk and the server's RSS (now and peak), the current version's bytes (the index endpoint's
 *   `accountIndex.bytes`: data and indexes), and the same once the versions the sync wrote are old enough to go
 *   (INDEX_KEEP_VERSIONS_MS, set here to its least allowed value, INDEX_READ_CONSISTENCY_MS + SEARCH_TIMEOUT_MS,
 *   so the run does not wait five minutes per sync), with the number of versions left.
 * - With `--baseline <git ref>`, Quarry at that commit syncs the same tables in the same run, taking turns with the
 *   current code (who goes first alternates), so both see the machine alike: the before and after of one run.
 * - Sphinx's indexer (scripts/bench/lib/sphinx.ts) reads each table once: its seconds from start to exit and its bytes.
 * - The machine's load average is printed before and after each sync: the machine may be shared.
 * Targets: rows/s at 1M at least the rate at 100k divided by 1.2 (linear), at least 10,000 rows/s, and
 * the disk at most 1.5 x the current version's bytes after the sync.
 *
 *   npm run bench:sync -- [--rows 100000|1000000] [--baseline <git ref>]
 */
import { readdirSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { checkoutBaseline, treeBytes } from './lib/anchor.js';
import {
  articles, benchPgUrl, CORPUS_ROWS, ensureCorpus, ensurePostgresArticles, ensurePostgresDatabase, ensurePostgresMillion, MILLION_ROWS, MILLION_TABLE,
} from './lib/bench-corpus.js';
import { spawnServer } from '../lib/spawn-server.js';
import { peakRssOf, rssOf } from '../lib/processes.js';
import { startSphinx } from './lib/sphinx.js';
import { setAccount } from '../lib/store-admin.js';

const TARGET_LINEAR = 1.2;
const TARGET_ROWS_PER_S = 10_000;
const TARGET_DISK_X = 1.5;
/** INDEX_READ_CONSISTENCY_MS (1000) + SEARCH_TIMEOUT_MS (5000), their defaults: the least INDEX_KEEP_VERSIONS_MS allowed. */
const KEEP_VERSIONS_MS = 6000;
/** The longest the run waits for the old versions to go after the sync. */
const CLEANUP_WAIT_MS = 180_000;

function parseArgs(argv: string[]): { rows: number; baseline?: string } {
  const args: { rows: number; baseline?: string } = { rows: CORPUS_ROWS };
  const fail = (why: string): never => {
    console.error(`${why}\nusage: npm run bench:sync -- [--rows 100000|1000000] [--baseline <git ref>]`);
    process.exit(2);
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = () => argv[++i] ?? fail(`${arg} needs a value`);
    if (arg === '--rows') args.rows = Number(value());
    else if (arg === '--baseline') args.baseline = value();
    else fail(`unknown argument ${arg}`);
  }
  if (args.rows !== CORPUS_ROWS && args.rows !== MILLION_ROWS) fail('--rows is 100000 or 1000000');
  return args;
}

interface SyncFigures {
  rows: number;
  seconds: number;
  diskAtReady: number;
  rssAtReady: number;
  peakRss: number;
  currentBytes: number;
  diskAfter: number;
  versionsAfter: number;
  cleanupSeconds: number;
  load: [number, number];
}

const versionsOf = (indexDir: string): number => {
  const space = existsSync(indexDir) ? readdirSync(indexDir).find((name) => name.startsWith('space_')) : undefined;
  const dir = space ? join(indexDir, space, '_versions') : null;
  return dir && existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.manifest')).length : 0;
};

/** One first sync of `table` by the Quarry of `cwd` (this checkout when absent), in a fresh data folder. */
async function firstSync(table: string, pgUrl: URL, cwd?: string): Promise<SyncFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-sync-'));
  const server = await spawnServer(
    { DATA_DIR: dataDir, RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0', NODE_ENV: 'development', INDEX_KEEP_VERSIONS_MS: String(KEEP_VERSIONS_MS) },
    { built: true, cwd },
  );
  try {
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method, headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() as { data: any } };
    };
    const email = `sync-${Date.now()}@example.com`;
    const registered = await call('POST', '/api/v1/auth/register', null, { email, password: 'correct-horse-42', name: 'sync' });
    await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, email, { plan: 'enterprise' });
    const token = registered.body.data.tokens.accessToken as string;

    const loadBefore = loadavg()[0]!;
    const connectedAt = performance.now();
    const created = await call('POST', '/api/v1/databases', token, {
      name: 'Articles', engine: 'postgres', environment: 'live', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1),
      username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), tables: [table],
    });
    if (created.status !== 201) throw new Error(`connect: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.data.database.id as string;
    let state: { state: string; rows: number; job?: { status: string } };
    for (;;) {
      state = (await call('GET', `/api/v1/databases/${id}/index/tables/${table}`, token)).body.data;
      if (state.job?.status === 'failed') throw new Error(`sync failed: ${JSON.stringify(state.job)}`);
      if (state.state === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (performance.now() - connectedAt) / 1000;
    const load: [number, number] = [loadBefore, loadavg()[0]!];
    const indexDir = join(dataDir, 'index');
    const diskAtReady = treeBytes(indexDir);
    const rssAtReady = rssOf(server.child.pid!);
    const currentBytes = Number((await call('GET', `/api/v1/databases/${id}/index`, token)).body.data.accountIndex.bytes);

    // The versions the sync wrote go once they are older than INDEX_KEEP_VERSIONS_MS: wait for the folder to shrink
    // and hold still.
    const waitStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, KEEP_VERSIONS_MS));
    let diskAfter = treeBytes(indexDir);
    for (let stable = 0; stable < 3 && performance.now() - waitStarted < CLEANUP_WAIT_MS;) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const now = treeBytes(indexDir);
      stable = now === diskAfter && now <= TARGET_DISK_X * currentBytes ? stable + 1 : 0;
      diskAfter = now;
    }
    return {
      rows: state.rows, seconds, diskAtReady, rssAtReady, peakRss: peakRssOf(server.child.pid!), currentBytes, diskAfter,
      versionsAfter: versionsOf(indexDir), cleanupSeconds: (performance.now() - waitStarted) / 1000, load,
    };
  } catch (error) {
    console.error(`the server's output:\n${server.output().slice(-4000)}`);
    throw error;
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const args = parseArgs(process.argv.slice(2));
ensureCorpus();
const pgUrl = benchPgUrl();
await ensurePostgresDatabase(pgUrl);
const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 2 });
await ensurePostgresArticles(pool, () => articles());
await pool.end();
const sizes: Array<{ rows: number; table: string }> = [{ rows: CORPUS_ROWS, table: 'articles' }];
if (args.rows === MILLION_ROWS) {
  await ensurePostgresMillion(pgUrl);
  sizes.push({ rows: MILLION_ROWS, table: MILLION_TABLE });
}

const baseline = args.baseline ? checkoutBaseline(args.baseline) : null;
const contenders: Array<{ name: string; cwd?: string }> = [{ name: 'Quarry' }];
if (baseline) contenders.push({ name: `Quarry ${baseline.commit}`, cwd: baseline.dir });
const results = new Map<string, SyncFigures>();
const sphinx = new Map<number, { seconds: number; bytes: number }>();
try {
  for (const [i, size] of sizes.entries()) {
    const order = i % 2 === 0 ? contenders : [...contenders].reverse();
    for (const contender of order) {
      console.log(`${contender.name}: first sync of ${size.table} (${size.rows.toLocaleString('en')} rows)`);
      results.set(`${contender.name}|${size.rows}`, await firstSync(size.table, pgUrl, contender.cwd));
    }
    console.log(`Sphinx: indexer over ${size.table}`);
    const anchor = await startSphinx(pgUrl, size.table);
    sphinx.set(size.rows, { seconds: anchor.indexed.seconds, bytes: anchor.indexed.bytes });
    await anchor.stop();
  }
} finally {
  baseline?.remove();
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');
console.log(`\nFirst sync of a PostgreSQL table into the index, text only (no vectors), INDEX_KEEP_VERSIONS_MS=${KEEP_VERSIONS_MS}; Sphinx's indexer on the same table in the same run`);
console.log(`Targets: rows/s >= ${TARGET_ROWS_PER_S}; rate at 1M >= rate at 100k / ${TARGET_LINEAR}; disk after the old versions go <= ${TARGET_DISK_X} x the current version\n`);
console.log('| system | rows | seconds | rows/s | disk at ready MB | current version MB | disk after cleanup MB (x current) | versions left | RSS at ready MB | peak RSS MB | load 1-min before/after | targets |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const size of sizes) {
  for (const contender of contenders) {
    const r = results.get(`${contender.name}|${size.rows}`)!;
    const rate = r.rows / r.seconds;
    const checks = [`>= ${TARGET_ROWS_PER_S / 1000}k rows/s: ${verdict(rate >= TARGET_ROWS_PER_S)}`, `disk: ${verdict(r.diskAfter <= TARGET_DISK_X * r.currentBytes)}`];
    if (size.rows === MILLION_ROWS) {
      const small = results.get(`${contender.name}|${CORPUS_ROWS}`)!;
      const ratio = (small.rows / small.seconds) / rate;
      checks.unshift(`100k/1M rate ${ratio.toFixed(2)} <= ${TARGET_LINEAR}: ${verdict(ratio <= TARGET_LINEAR)}`);
    }
    console.log(`| ${contender.name} | ${r.rows} | ${r.seconds.toFixed(1)} | ${Math.round(rate)} | ${mb(r.diskAtReady)} | ${mb(r.currentBytes)} | ${mb(r.diskAfter)} (${(r.diskAfter / r.currentBytes).toFixed(2)} x, ${r.cleanupSeconds.toFixed(0)} s after ready) | ${r.versionsAfter} | ${mb(r.rssAtReady)} | ${mb(r.peakRss)} | ${r.load[0].toFixed(2)} / ${r.load[1].toFixed(2)} | ${checks.join('; ')} |`);
  }
  const s = sphinx.get(size.rows)!;
  console.log(`| Sphinx indexer | ${size.rows} | ${s.seconds.toFixed(1)} | ${Math.round(size.rows / s.seconds)} | ${mb(s.bytes)} | - | - | - | - | - | - | |`);
}
if (baseline) {
  console.log('\nBefore / after (the baseline\'s rate and disk over the current code\'s)\n');
  for (const size of sizes) {
    const now = results.get(`Quarry|${size.rows}`)!;
    const before = results.get(`${contenders[1]!.name}|${size.rows}`)!;
    console.log(`- ${size.rows.toLocaleString('en')} rows: rows/s ${Math.round(before.rows / before.seconds)} -> ${Math.round(now.rows / now.seconds)} (${((now.rows / now.seconds) / (before.rows / before.seconds)).toFixed(2)} x); disk at ready ${mb(before.diskAtReady)} -> ${mb(now.diskAtReady)} MB; after cleanup ${mb(before.diskAfter)} -> ${mb(now.diskAfter)} MB`);
  }
}
