/**
 * How fresh poll mode keeps the index, and what it costs (docs/search.md, "Following changes"), on the standard
 * corpus (../shared/bench: 100,000 articles) in PostgreSQL:
 *
 * - `articles_fresh` is a copy of the corpus table with an `updated_at` column (indexed), made afresh each run.
 * - Quarry runs built, as its own process, result cache and rate limiter off. The table is connected (a full sync)
 *   without a schedule (a scheduled full sync pauses the table's polls while it runs), then put in poll mode (`changeColumn: updated_at`, `pollIntervalSeconds`: 1 by default).
 * - Load: a writer updates random rows at a steady rate (200 changes/s by default) for 60 s, while a prober
 *   writes a unique word into a row and times until a search finds it, then deletes a row holding another unique
 *   word and times until a search no longer finds it; and a searcher runs the corpus's verbose queries.
 * - Searches LanceDB's text index answers (the same queries excluding a word no row has, `-zqabsent`) scan each row
 *   written since the space's last fold: they run before the load (the space folded) and right after it (what the
 *   fold schedule left unfolded), apart from the load so as not to change it.
 * - The same queries run without load before and after the load phase, so the "under load" p50 is compared with a
 *   baseline of the same run.
 * - CPU: Quarry's process CPU time (/proc) while the writer alone runs (a third of the load time, before the load
 *   phase), per 1,000 changes, against a full re-sync of the same table measured in the same run.
 *
 * With `--mode stream` the table follows PostgreSQL's logical replication instead (stream mode: the server needs
 * wal_level=logical); its slot and publication are dropped at the end. With `--engine mariadb` the same runs on
 * MariaDB (BENCH_MYSQL_URL, the corpus's `articles` table loaded once); its stream mode reads the binary log (the
 * server needs log_bin and binlog_format=ROW, as .ci/run sets).
 *
 *   npm run bench:freshness -- [--seconds 60] [--rate 200] [--interval 1] [--mode poll|stream] [--engine postgres|mariadb]
 * Figures are printed, never asserted (the machine is shared).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { streamName } from '../../src/search-index/changes/pg-stream.js';
import { ApiClient } from '../lib/api-client.js';
import { articles, benchMysqlUrl, benchPgUrl, ensureCorpus, ensureMysqlArticles, ensurePostgresArticles, ensurePostgresDatabase, verboseQueries } from './lib/bench-corpus.js';
import { spawnServer } from '../lib/spawn-server.js';
import { setAccount } from '../lib/store-admin.js';
import { percentile } from './lib/stats.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('seconds', 60);
const RATE = arg('rate', 200);
const INTERVAL = arg('interval', 1);
const MODE = process.argv.includes('--mode') && process.argv[process.argv.indexOf('--mode') + 1] === 'stream' ? 'stream' : 'poll';
const ENGINE = process.argv.includes('--engine') && process.argv[process.argv.indexOf('--engine') + 1] === 'mariadb' ? 'mariadb' : 'postgres';
if (process.argv.includes('--help')) {
  console.log(`npm run bench:freshness -- [options]
  --seconds N              load phase length (default 60)
  --rate N                 changes per second written (default 200)
  --interval N             pollIntervalSeconds in poll mode (default 1)
  --mode poll|stream       how the index follows the table (default poll)
  --engine postgres|mariadb  the source (default postgres: BENCH_PG_URL; mariadb: BENCH_MYSQL_URL)`);
  process.exit(0);
}
const TABLE = 'articles_fresh';
const BASELINE_SEARCHES = 60;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 per second on Linux)
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

/** The statements the bench runs on its source, in each engine's SQL. */
interface Source {
  /** Makes `articles_fresh` afresh from the corpus table. */
  prepare(): Promise<void>;
  touch(ids: number[]): Promise<void>;
  retitle(id: number, title: string): Promise<void>;
  remove(id: number): Promise<void>;
  restore(id: number): Promise<void>;
  /** The connection's fields for POST /databases. */
  connection(): Record<string, unknown>;
  /** After the run: the table dropped, and what stream mode left on the server. */
  cleanup(db: string | null): Promise<void>;
}

async function postgresSource(rows: () => Array<[string, string]>): Promise<Source> {
  const pgUrl = benchPgUrl();
  await ensurePostgresDatabase(pgUrl);
  const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 4 });
  await ensurePostgresArticles(pool, rows);
  return {
    prepare: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await pool.query(`CREATE TABLE ${TABLE} AS SELECT id, title, body, clock_timestamp() AS updated_at FROM articles`);
      await pool.query(`ALTER TABLE ${TABLE} ADD PRIMARY KEY (id)`);
      await pool.query(`CREATE INDEX ${TABLE}_updated_at ON ${TABLE} (updated_at)`);
      await pool.query(`VACUUM ANALYZE ${TABLE}`);
    },
    touch: async (ids) => void (await pool.query(`UPDATE ${TABLE} SET updated_at = clock_timestamp(), body = body || ' revised' WHERE id = ANY($1::int[])`, [ids])),
    retitle: async (id, title) => void (await pool.query(`UPDATE ${TABLE} SET title = $2, updated_at = clock_timestamp() WHERE id = $1`, [id, title])),
    remove: async (id) => void (await pool.query(`DELETE FROM ${TABLE} WHERE id = $1`, [id])),
    restore: async (id) => void (await pool.query(`INSERT INTO ${TABLE} (id, title, body, updated_at) SELECT id, title, body, clock_timestamp() FROM articles WHERE id = $1`, [id])),
    connection: () => ({
      engine: 'postgres', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1),
      username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password),
    }),
    cleanup: async (db) => {
      // A slot left behind (the run failed before stream mode was turned off) keeps WAL on the server.
      if (MODE === 'stream' && db) {
        const slot = streamName(db);
        await pool.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [slot]).catch(() => undefined);
        await pool.query(`DROP PUBLICATION IF EXISTS ${slot}`).catch(() => undefined);
      }
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
      await pool.end();
    },
  };
}

async function mariadbSource(rows: () => Array<[string, string]>): Promise<Source> {
  const url = benchMysqlUrl();
  await ensureMysqlArticles(url, rows);
  const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 4 });
  return {
    prepare: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await pool.query(`CREATE TABLE ${TABLE} (id INT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, updated_at DATETIME(6) NOT NULL, INDEX ${TABLE}_updated_at (updated_at)) ENGINE=InnoDB`);
      await pool.query(`INSERT INTO ${TABLE} SELECT id, title, body, NOW(6) FROM articles`);
      await pool.query(`ANALYZE TABLE ${TABLE}`);
    },
    touch: async (ids) => void (await pool.query(`UPDATE ${TABLE} SET updated_at = NOW(6), body = CONCAT(body, ' revised') WHERE id IN (?)`, [ids])),
    retitle: async (id, title) => void (await pool.query(`UPDATE ${TABLE} SET title = ?, updated_at = NOW(6) WHERE id = ?`, [title, id])),
    remove: async (id) => void (await pool.query(`DELETE FROM ${TABLE} WHERE id = ?`, [id])),
    restore: async (id) => void (await pool.query(`INSERT INTO ${TABLE} (id, title, body, updated_at) SELECT id, title, body, NOW(6) FROM articles WHERE id = ?`, [id])),
    connection: () => ({
      engine: 'mysql', host: url.hostname, port: Number(url.port || 3306), database: url.pathname.slice(1),
      username: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password),
    }),
    // The binary log reader keeps nothing on the server.
    cleanup: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
      await pool.end();
    },
  };
}
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function main(): Promise<void> {
  ensureCorpus();
  let rows: Array<[string, string]> | null = null;
  const corpusRows = () => (rows ??= articles());
  const source = ENGINE === 'mariadb' ? await mariadbSource(corpusRows) : await postgresSource(corpusRows);
  await source.prepare();
  const queries = verboseQueries(corpusRows(), BASELINE_SEARCHES * 2 + 2000);
  const maxId = 100_000;

  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-freshness-'));
  const server = await spawnServer({ DATA_DIR: dataDir, RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0', NODE_ENV: 'development', LOG_LEVEL: 'warn' }, { built: true });
  const pid = server.child.pid!;
  const client = new ApiClient(server.url);
  let db: string | null = null;
  try {
    const registered = await client.post('/api/v1/auth/register', { email: `bench-fresh-${Date.now()}@example.com`, password: 'correct-horse-42', name: 'fresh' });
    const token = registered.body.data.tokens.accessToken as string;
    await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, registered.body.data.user.email, { plan: 'enterprise' });
    const key = (await client.post('/api/v1/keys', { name: 'fresh', environment: 'live', permissions: ['search'], rateLimitTier: 'enterprise' }, { token })).body.data.secretKey as string;
    const created = await client.post('/api/v1/databases', {
      name: 'Fresh articles', ...source.connection(), tables: [TABLE], environment: 'live',
      // No scheduled full sync during the measurement (the re-sync it is compared with is measured on its own).
      indexing: { enabled: true, syncIntervalMinutes: null },
    }, { token });
    if (created.status !== 201) throw new Error(`connect: ${created.status} ${JSON.stringify(created.body)}`);
    db = created.body.data.database.id as string;
    const tablePath = `/api/v1/databases/${db}/index/tables/${TABLE}`;
    const view = async () => (await client.get(tablePath, { token })).body.data as { state: string; rows: number; lagSeconds: number | null; lastError: unknown; job?: { status: string; jobId: string } };

    // The first full sync (connect), timed in CPU.
    let cpu0 = cpuSeconds(pid);
    for (let v = await view(); v.state !== 'ready' || v.job?.status !== 'done'; v = await view()) await pause(200);
    const firstSyncCpu = cpuSeconds(pid) - cpu0;

    const search = async (query: string) => {
      const t0 = performance.now();
      const res = await client.post('/api/v1/search', { query, databases: [db], limit: 20 }, { token: key });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      return { ms: performance.now() - t0, body: res.body.data as { results: Array<{ primaryKey: { id: number } }>; databases: Array<{ lagSeconds: number | null }> } };
    };
    let q = 0;
    const baseline = async () => {
      const times: number[] = [];
      for (let i = 0; i < BASELINE_SEARCHES; i++) times.push((await search(queries[q++ % queries.length]!)).ms);
      return times;
    };
    const excluding = async () => {
      const times: number[] = [];
      for (let i = 0; i < BASELINE_SEARCHES / 2; i++) times.push((await search(`${queries[q++ % queries.length]!} -zqabsent`)).ms);
      return sorted(times);
    };

    // Poll mode on; its first poll reads every row once (unchanged rows are skipped by their hash). Stream mode on:
    // its slot is made and the table re-read in full once (the reconcile of what came before the slot).
    const on = await client.patch(tablePath, MODE === 'stream' ? { mode: 'stream' } : { changeColumn: 'updated_at', pollIntervalSeconds: INTERVAL }, { token });
    if (on.status !== 200) throw new Error(`${MODE} mode: ${JSON.stringify(on.body)}`);
    cpu0 = cpuSeconds(pid);
    const firstPollStarted = performance.now();
    if (MODE === 'stream') {
      // The reconcile queued when the slot is made, then a stream caught up (its first stored position).
      await pause(2000);
      for (let v = await view(); v.job?.status !== 'done' || v.lagSeconds === null || v.lagSeconds > 2; v = await view()) {
        if (v.lastError) throw new Error(`stream mode: ${JSON.stringify(v.lastError)}`);
        await pause(200);
      }
    } else {
      for (let v = await view(); v.lagSeconds === null || v.lagSeconds > INTERVAL + 2; v = await view()) await pause(200);
    }
    const firstPollCpu = cpuSeconds(pid) - cpu0;
    const firstPollSeconds = (performance.now() - firstPollStarted) / 1000;
    for (let i = 0; i < 10; i++) await search(queries[q++ % queries.length]!); // warm-up
    const before = await baseline();
    const excludingBefore = await excluding();

    // The writer: RATE changes a second, in ten statements a second.
    let changes = 0;
    const write = async (on: () => boolean) => {
      const perTick = Math.max(1, Math.round(RATE / 10));
      let next = performance.now();
      while (on()) {
        const ids = Array.from({ length: perTick }, () => 1 + Math.floor(Math.random() * maxId));
        await source.touch(ids);
        changes += perTick;
        next += 100;
        await pause(Math.max(0, next - performance.now()));
      }
    };

    // CPU: the writer alone for a third of the load time, so Quarry's CPU is the polls' and nothing else's.
    let writing = true;
    const cpuPoll0 = cpuSeconds(pid);
    const polled = write(() => writing);
    await pause((SECONDS * 1000) / 3);
    writing = false;
    await polled;
    await pause(INTERVAL * 1000 + 1000); // the last changes polled
    const pollCpu = cpuSeconds(pid) - cpuPoll0;
    const pollChanges = changes;

    // Load: writer, prober, searcher, for SECONDS.
    changes = 0;
    let running = true;
    const loadStarted = performance.now();
    const writer = write(() => running);
    const visible: number[] = [];
    const gone: number[] = [];
    const prober = (async () => {
      const word = () => `zq${Math.random().toString(36).slice(2, 10).replace(/[0-9]/g, 'x')}`;
      while (running) {
        // A unique word written into a row: until a search finds that row.
        const id = 1 + Math.floor(Math.random() * maxId);
        const fresh = word();
        await source.retitle(id, `${fresh} probe`);
        let t0 = performance.now();
        while (running && !(await search(fresh)).body.results.some((r) => r.primaryKey.id === id)) await pause(50);
        if (running) visible.push(performance.now() - t0);
        // That row deleted: until a search no longer finds it.
        await source.remove(id);
        t0 = performance.now();
        while (running && (await search(fresh)).body.results.some((r) => r.primaryKey.id === id)) await pause(50);
        if (running) gone.push(performance.now() - t0);
        await source.restore(id);
      }
    })();
    const underLoad: number[] = [];
    const searcher = (async () => {
      while (running) underLoad.push((await search(queries[q++ % queries.length]!)).ms);
    })();
    await pause(SECONDS * 1000);
    running = false;
    await Promise.all([writer, prober, searcher]);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const after = await baseline();
    const excludingAfter = await excluding();

    // A full re-sync of the same table, in the same run, for the cost of following changes by re-reading.
    cpu0 = cpuSeconds(pid);
    const resyncStarted = performance.now();
    const synced = await client.post(`/api/v1/databases/${db}/index/sync`, { tables: [TABLE] }, { token });
    if (synced.status >= 300) throw new Error(`re-sync: ${JSON.stringify(synced.body)}`);
    const jobId = synced.body.data.jobs[0].jobId as string;
    for (let v = await view(); !(v.job?.jobId === jobId && v.job.status === 'done'); v = await view()) await pause(200);
    const resyncCpu = cpuSeconds(pid) - cpu0;
    const resyncSeconds = (performance.now() - resyncStarted) / 1000;

    const vis = sorted(visible);
    const del = sorted(gone);
    const quiet = sorted([...before, ...after]);
    const loaded = sorted(underLoad);
    const perThousand = pollCpu / (pollChanges / 1000);
    if (MODE === 'stream') {
      const off = await client.patch(tablePath, { mode: 'snapshot' }, { token });
      if (off.status !== 200 || off.body.data.lastError) console.log(`stream mode off: ${JSON.stringify(off.body).slice(0, 300)}`);
    }
    console.log(`${MODE === 'stream' ? 'stream mode' : `poll mode, pollIntervalSeconds ${INTERVAL},`} on ${ENGINE === 'mariadb' ? 'MariaDB' : 'PostgreSQL'} ${TABLE} (100,000 rows), ${changes} changes in ${loadSeconds.toFixed(1)} s (${(changes / loadSeconds).toFixed(0)}/s)`);
    console.log(`visible after an update: n=${vis.length} p50 ${fmt(percentile(vis, 0.5))} p95 ${fmt(percentile(vis, 0.95))} max ${fmt(vis.at(-1) ?? NaN)}`);
    console.log(`gone after a delete:     n=${del.length} p50 ${fmt(percentile(del, 0.5))} p95 ${fmt(percentile(del, 0.95))} max ${fmt(del.at(-1) ?? NaN)}`);
    console.log(`search p50: ${fmt(percentile(loaded, 0.5))} under load (n=${loaded.length}) vs ${fmt(percentile(quiet, 0.5))} without (n=${quiet.length}, before and after): ratio ${(percentile(loaded, 0.5) / percentile(quiet, 0.5)).toFixed(2)}`);
    console.log(`searches with an excluded word (LanceDB's text index) p50: ${fmt(percentile(excludingAfter, 0.5))} right after the load vs ${fmt(percentile(excludingBefore, 0.5))} before it, folded (n=${excludingAfter.length} each): ratio ${(percentile(excludingAfter, 0.5) / percentile(excludingBefore, 0.5)).toFixed(2)}`);
    console.log(`Quarry CPU: ${perThousand.toFixed(2)} s per 1,000 changes ${MODE === 'stream' ? 'streamed' : 'polled'} (${pollCpu.toFixed(1)} s for ${pollChanges} changes, writer alone) vs ${resyncCpu.toFixed(1)} s for one full re-sync (${resyncSeconds.toFixed(1)} s wall): one re-sync = ${(resyncCpu / perThousand).toFixed(1)}k changes' worth`);
    console.log(`first sync on connect: ${firstSyncCpu.toFixed(1)} s CPU; ${MODE === 'stream' ? `stream start (${ENGINE === 'mariadb' ? 'binary log position taken' : 'slot made'}, the table re-read once)` : 'first poll (reads every row, writes none changed)'}: ${firstPollCpu.toFixed(1)} s CPU, ${firstPollSeconds.toFixed(1)} s wall`);
  } catch (error) {
    // Why the server went away, if it did: its own last words.
    console.error(`Quarry's output (tail):\n${server.output().slice(-4000)}`);
    throw error;
  } finally {
    await server.stop();
    await source.cleanup(db);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
