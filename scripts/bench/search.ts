/**
 * The search speed figures: search from Quarry's own index against each engine's own naive any-word ranking, and
 * how fast the index is filled, on the standard corpus (../shared/bench: 100,000 articles).
 *
 * - The corpus is loaded once into PostgreSQL (GIN on to_tsvector), MariaDB (FULLTEXT) and SQLite (FTS5), each as
 *   articles(id primary key, title, body) (scripts/bench/lib/bench-corpus.ts).
 * - Quarry runs built, as its own process (as `npm start` runs it), with the result cache off and the rate limiter
 *   off. Each engine's table is connected by its own user (its own search space), and the sync that the connection
 *   starts is timed from the connection to the table being searchable: rows per second of the whole sync, text only.
 * - Queries: verbose 8-word natural-language queries built from corpus rows (scripts/bench/lib/bench-corpus.ts), a
 *   different one for every request, so no cache flatters a figure. Quarry answers them from the index (natural
 *   mode, any word may match, BM25, limit 20), one request at a time after WARMUP searches.
 * - Direct: the same queries run on each engine by its own driver, ranking every row that has any of the words,
 *   which is what "any word, ranked" costs without an index of Quarry's: PostgreSQL ts_rank_cd over an OR tsquery,
 *   MariaDB MATCH ... AGAINST in natural language mode, SQLite FTS5 bm25() over an OR query. A naive PostgreSQL
 *   query takes tens of seconds, so each engine runs at least MIN_DIRECT queries and then as many as fit in
 *   DIRECT_BUDGET_MS.
 * Targets: Quarry's p50 at most 100 ms and at most 1/10 of the direct query's; sync at least 5,000 rows/s.
 * Then id and title are made filterable (a rewrite of the table's rows) and the same queries run with a
 * filter and with a facet, taking turns with the plain query: each p50 at most 2 x the plain one.
 * Then the anchor: Quarry against Sphinx on the same PostgreSQL table, interleaved, with where a search's
 * time goes and the event loop's delay (scripts/bench/lib/anchor.ts); at 1,000,000 rows with `--rows 1000000`, and with
 * Quarry at an older commit beside the current one with `--baseline <git ref>`.
 *
 * Or, with `--index-uri s3` (s3rver on loopback behind the proxy that honours conditional writes) or
 * `--index-uri <uri>` (settings from the environment), only this: Quarry with its index in a local folder against
 * Quarry with its index on that object store, the same table and queries taking turns, p50 and the ratio against
 * the target (object store <= 1.3 x local).
 *
 *   npm run bench:search -- [--requests N, default 200] [--anchor-only] [--rows 100000|1000000] [--baseline <git ref>]
 *                           [--index-uri s3|<uri>] [--compare-env NAME=VALUE[,NAME=VALUE...]]...
 * (`--requests`: queries through Quarry per engine, and per query set in the anchor; a bare number says the same.
 * The per-engine part always runs on the 100,000-row corpus; `--rows` sizes the anchor.)
 */
import { linkSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { ApiClient } from '../lib/api-client.js';
import { parseAnchorArgs, runAnchor, runObjectStoreComparison } from './lib/anchor.js';
import {
  articles, benchMysqlUrl, benchPgUrl, CORPUS_DIR, CORPUS_ROWS, ensureCorpus, ensureMysqlArticles, ensurePostgresArticles,
  ensurePostgresDatabase, ensureSqliteArticles, SQLITE_FILE, verboseQueries,
} from './lib/bench-corpus.js';
import { spawnServer } from '../lib/spawn-server.js';
import { setAccount } from '../lib/store-admin.js';
import { percentile } from './lib/stats.js';

const args = parseAnchorArgs(process.argv.slice(2), 'npm run bench:search --');
const measured = args.requests;
const WARMUP = 20;
const LIMIT = 20;
const MIN_DIRECT = 3;
const DIRECT_BUDGET_MS = 60_000;
const TARGET_P50_MS = 100;
const TARGET_RATIO = 0.1;
const TARGET_SYNC_ROWS_PER_S = 5000;

type Engine = 'postgres' | 'mysql' | 'sqlite';
const pgUrl = benchPgUrl();
const myUrl = benchMysqlUrl();

/** Each engine's naive any-word ranking of the whole table, as its own driver runs it. */
async function directRunner(engine: Engine): Promise<{ run(words: string[]): Promise<number>; close(): Promise<void> }> {
  if (engine === 'postgres') {
    const client = new pg.Client({ connectionString: pgUrl.toString() });
    await client.connect();
    await client.query('SET statement_timeout = 300000');
    const sql = "SELECT id, ts_rank_cd(to_tsvector('english', title || ' ' || body), q) AS score FROM articles, to_tsquery('english', $1) q "
      + "WHERE to_tsvector('english', title || ' ' || body) @@ q ORDER BY score DESC LIMIT 20";
    return { run: async (words) => (await client.query(sql, [words.join(' | ')])).rowCount ?? 0, close: () => client.end() };
  }
  if (engine === 'mysql') {
    const connection = await mysql.createConnection({ uri: myUrl.toString() });
    const sql = 'SELECT id, MATCH (title, body) AGAINST (? IN NATURAL LANGUAGE MODE) AS score FROM articles '
      + 'WHERE MATCH (title, body) AGAINST (? IN NATURAL LANGUAGE MODE) ORDER BY score DESC LIMIT 20';
    return {
      run: async (words) => ((await connection.query(sql, [words.join(' '), words.join(' ')]))[0] as unknown[]).length,
      close: () => connection.end(),
    };
  }
  const db = new sqlite3.Database(join(CORPUS_DIR, SQLITE_FILE), sqlite3.OPEN_READONLY);
  const sql = 'SELECT rowid, bm25(articles_fts) AS score FROM articles_fts WHERE articles_fts MATCH ? ORDER BY score LIMIT 20';
  return {
    run: (words) => new Promise((resolve, reject) => db.all(sql, [words.map((w) => `"${w}"`).join(' OR ')], (error, rows) => (error ? reject(error) : resolve(rows.length)))),
    close: () => new Promise((resolve) => db.close(() => resolve())),
  };
}

/** Quarry's index against each engine's own naive ranking, and what filters and facets cost. */
async function perEngine(): Promise<void> {
  ensureCorpus();
  let rows: Array<[string, string]> | null = null;
  const corpusRows = () => (rows ??= articles());
  await ensurePostgresDatabase(pgUrl);
  const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 2 });
  await ensurePostgresArticles(pool, corpusRows);
  await pool.end();
  await ensureMysqlArticles(myUrl, corpusRows);
  await ensureSqliteArticles(join(CORPUS_DIR, SQLITE_FILE), corpusRows);
  const queries = verboseQueries(corpusRows(), WARMUP + measured);

  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-search-'));
  const server = await spawnServer({
    DATA_DIR: dataDir, RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0', NODE_ENV: 'development',
  }, { built: true });
  const client = new ApiClient(server.url);
  const connection: Record<Engine, Record<string, unknown>> = {
    postgres: { name: 'Articles (PostgreSQL)', engine: 'postgres', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1), username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), tables: ['articles'] },
    mysql: { name: 'Articles (MariaDB)', engine: 'mysql', host: myUrl.hostname, port: Number(myUrl.port || 3306), database: myUrl.pathname.slice(1), username: decodeURIComponent(myUrl.username || 'root'), password: decodeURIComponent(myUrl.password), tables: ['articles'] },
    sqlite: { name: 'Articles (SQLite)', engine: 'sqlite', database: SQLITE_FILE },
  };

  const lines: string[] = [];
  const refinedLines: string[] = [];
  try {
    for (const engine of ['postgres', 'mysql', 'sqlite'] as const) {
      const registered = await client.post('/api/v1/auth/register', { email: `bench-${engine}-${Date.now()}@example.com`, password: 'correct-horse-42', name: engine });
      const token = registered.body.data.tokens.accessToken as string;
      // What the operator does (`npm run user -- plan`), straight into the server's store: enterprise keys and rows.
      await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, registered.body.data.user.email, { plan: 'enterprise' });
      if (engine === 'sqlite') {
        // The account's own SQLite folder, holding the corpus file (a hard link: the same bytes, nothing copied).
        const own = join(dataDir, 'sqlite', registered.body.data.user.id);
        mkdirSync(own, { recursive: true });
        linkSync(join(CORPUS_DIR, SQLITE_FILE), join(own, SQLITE_FILE));
      }
      const key = (await client.post('/api/v1/keys', { name: engine, environment: 'live', permissions: ['search'], rateLimitTier: 'enterprise' }, { token })).body.data.secretKey as string;

      // Sync: from the connection to the table being searchable.
      const connectedAt = performance.now();
      const created = await client.post('/api/v1/databases', { ...connection[engine], environment: 'live' }, { token });
      if (created.status !== 201) throw new Error(`connect ${engine}: ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.data.database.id as string;
      let table: { state: string; rows: number; job?: { status: string; ratePerSecond: number | null; error: unknown } };
      for (;;) {
        table = (await client.get(`/api/v1/databases/${id}/index/tables/articles`, { token })).body.data;
        if (table.job?.status === 'failed') throw new Error(`sync of ${engine} failed: ${JSON.stringify(table.job)}`);
        if (table.state === 'ready') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const syncSeconds = (performance.now() - connectedAt) / 1000;
      const syncRate = table.rows / syncSeconds;

      const searchOnce = async (query: string, extra: Record<string, unknown>) => {
        const t0 = performance.now();
        const res = await client.post('/api/v1/search', { query, databases: [id], limit: LIMIT, ...extra }, { token: key });
        const took = performance.now() - t0;
        if (res.status !== 200 || res.body.data.databases[0].source !== 'index') throw new Error(`search ${engine}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
        return took;
      };
      const times: number[] = [];
      for (const [i, query] of queries.entries()) {
        const took = await searchOnce(query, {});
        if (i >= WARMUP) times.push(took);
      }
      times.sort((a, b) => a - b);

      // What a filter and facets cost: the same queries with a filter and with facets, taking turns with the plain
      // query so all three see the machine alike. The corpus has no category: the filter is a range on id (half the rows), the facet is
      // the title, a text column with nearly as many values as rows (the most counting a facet can ask).
      const patched = await client.patch(`/api/v1/databases/${id}/index/tables/articles`, { filterableColumns: ['id', 'title'] }, { token });
      if (patched.status !== 200) throw new Error(`filterable columns ${engine}: ${JSON.stringify(patched.body)}`);
      for (;;) {
        const state = (await client.get(`/api/v1/databases/${id}/index/tables/articles`, { token })).body.data;
        if (state.job?.trigger === 'settings' && state.job.status === 'done') break;
        if (state.job?.status === 'failed') throw new Error(`rewrite of ${engine} failed: ${JSON.stringify(state.job)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const refined = { plain: [] as number[], filtered: [] as number[], faceted: [] as number[] };
      const filter = { and: [{ column: 'id', op: 'gte', value: 25_001 }, { column: 'id', op: 'lte', value: 75_000 }] };
      for (const [i, query] of queries.entries()) {
        const plain = await searchOnce(query, {});
        const filtered = await searchOnce(query, { filter });
        const faceted = await searchOnce(query, { facets: ['title'] });
        if (i < WARMUP) continue;
        refined.plain.push(plain);
        refined.filtered.push(filtered);
        refined.faceted.push(faceted);
      }
      for (const list of Object.values(refined)) list.sort((a, b) => a - b);
      const [plainP50, filteredP50, facetedP50] = [refined.plain, refined.filtered, refined.faceted].map((l) => percentile(l, 0.5));
      refinedLines.push(`| ${engine} | ${plainP50!.toFixed(1)} | ${filteredP50!.toFixed(1)} (${(filteredP50! / plainP50!).toFixed(2)} x) | ${facetedP50!.toFixed(1)} (${(facetedP50! / plainP50!).toFixed(2)} x) | ${filteredP50! <= 2 * plainP50! && facetedP50! <= 2 * plainP50! ? 'met' : 'NOT MET'} |`);

      const direct = await directRunner(engine);
      const directTimes: number[] = [];
      const started = performance.now();
      for (const query of queries.slice(WARMUP)) {
        const t0 = performance.now();
        await direct.run(query.split(' '));
        directTimes.push(performance.now() - t0);
        if (directTimes.length >= MIN_DIRECT && performance.now() - started > DIRECT_BUDGET_MS) break;
      }
      await direct.close();
      directTimes.sort((a, b) => a - b);

      const p50 = percentile(times, 0.5);
      const directP50 = percentile(directTimes, 0.5);
      const ratio = p50 / directP50;
      const met = p50 <= TARGET_P50_MS && ratio <= TARGET_RATIO && syncRate >= TARGET_SYNC_ROWS_PER_S;
      lines.push(`| ${engine} | ${Math.round(syncRate)} (${table.rows} rows in ${syncSeconds.toFixed(1)} s) | ${p50.toFixed(1)} | ${percentile(times, 0.99).toFixed(1)} | ${directP50.toFixed(1)} (${directTimes.length} queries) | ${ratio.toFixed(4)} | ${met ? 'met' : 'NOT MET'} |`);
      console.log(`${engine}: done`);
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\nSearch from Quarry's index against each engine's naive any-word ranking, ${CORPUS_ROWS.toLocaleString('en')} articles, verbose 8-word natural queries (a new one per request), limit ${LIMIT}, ${measured} queries through Quarry after ${WARMUP} warm-up, one at a time`);
  console.log(`Targets: Quarry p50 <= ${TARGET_P50_MS} ms and <= ${TARGET_RATIO} x direct; sync >= ${TARGET_SYNC_ROWS_PER_S} rows/s (text, no vectors)\n`);
  console.log('| engine | sync rows/s | Quarry p50 ms | Quarry p99 ms | direct p50 ms | Quarry / direct | verdict |');
  console.log('|---|---|---|---|---|---|---|');
  for (const line of lines) console.log(line);
  console.log('\nFiltered and faceted queries, the same queries taking turns with the plain one; target: p50 <= 2 x plain\n');
  console.log('| engine | plain p50 ms | filtered p50 ms (id in a range of half the rows) | faceted p50 ms (facet: title) | verdict |');
  console.log('|---|---|---|---|---|');
  for (const line of refinedLines) console.log(line);
}

if (args.indexUri) {
  await runObjectStoreComparison({ requests: args.requests, rows: args.rows, indexUri: args.indexUri });
} else {
  if (!args.anchorOnly) await perEngine();
  await runAnchor({ requests: args.requests, rows: args.rows, baseline: args.baseline, compareEnv: args.compareEnv });
}
