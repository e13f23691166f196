/**
 * The live path's figure: verbose 8-word natural queries (deterministic, built from corpus rows) through Quarry's own
 * statement builders (src/sql-search) against each engine directly, and each engine's own naive any-word ranking of every
 * match in the same run, on the 100,000-row standard corpus: PostgreSQL with a GIN expression index, PostgreSQL with a
 * stored tsvector column, MariaDB FULLTEXT, SQLite FTS5, and the LIKE fallback on each engine.
 *
 * - Query n is built from row 1 + (n * 997) mod 100,000: eight distinct words spread across its title and body (three
 *   letters or more, none of InnoDB's stopwords), so every query has its source row as a match that holds every word.
 * - Quarry's statement is the rank statement of a 20-row first page with its details, run through Quarry's read-only
 *   executors and decoded as Quarry decodes it; the naive statement is each engine's plain any-word ranking
 *   (ORDER BY its relevance LIMIT 20 over every match; the LIKE fallback's own any-word score over the whole table).
 * - For each engine it prints p50/p99 of both, how often the bound was reached (the answer said approximate), and,
 *   on the queries both ran, how many of the naive top 10 Quarry's top 10 holds and how often each has the source
 *   row in its top 10. The naive statement is slow (PostgreSQL's expression index re-parses every matching row), so
 *   it runs on the first `naive` queries only.
 *   npx tsx scripts/bench/live-natural.ts [queries, default 100] [naive queries, default 10] [bounds, default the constant, e.g. 250,500,1000]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createExecutor, type PooledExecutor } from '../../src/connectors/index.js';
import { compileQuery } from '../../src/search-core/query.js';
import { tableQueries } from '../../src/sql-search/queries.js';
import { loadSearchSchema } from '../../src/sql-search/schema-catalog.js';
import { FALLBACK_SCAN_ROWS, LIVE_RANK_CANDIDATES } from '../../src/sql-search/sql-common.js';
import { chooseTargets } from '../../src/sql-search/targets.js';
import type { SearchTarget } from '../../src/sql-search/types.js';
import {
  articles as corpusArticles, benchMysqlUrl, benchPgUrl, CORPUS_DIR, CORPUS_ROWS, ensureCorpus, ensureMysqlArticles,
  ensurePostgresArticles, ensurePostgresDatabase, ensurePostgresStoredArticles, ensureSqliteArticles, SQLITE_FILE,
} from './lib/bench-corpus.js';
import { percentile } from './lib/stats.js';

const queryCount = Number(process.argv[2] ?? 100);
const naiveCount = Number(process.argv[3] ?? 10);
const bounds = (process.argv[4] ?? String(LIVE_RANK_CANDIDATES)).split(',').map(Number);
if (!Number.isInteger(queryCount) || queryCount < 1 || !Number.isInteger(naiveCount) || naiveCount < 0 || naiveCount > queryCount
  || bounds.some((b) => !Number.isInteger(b) || b < 1)) {
  console.error('usage: npx tsx scripts/bench/live-natural.ts [queries >= 1] [naive queries <= queries] [bounds, e.g. 250,500,1000]');
  process.exit(2);
}
const WORDS = 8;
const PAGE = 20;
const TOP = 10;
/** Statements may run this long: the naive ranking on an expression index takes tens of seconds. */
const TIMEOUT_MS = 120_000;
const LOOPBACK = { hostPolicy: { allowlist: [], allowPrivate: false, allowLoopback: true } };
const INNODB_STOPWORDS = new Set(('a about an are as at be by com de en for from how i in is it la of on or that the this to was what when where '
  + 'who will with und www').split(' '));

// ---- the corpus and the queries -----------------------------------------------------------------------------------

ensureCorpus();
let loaded: Array<[string, string]> | null = null;
const corpusRows = () => (loaded ??= corpusArticles());
await ensurePostgresDatabase(benchPgUrl());
const admin = new pg.Pool({ connectionString: benchPgUrl().toString(), max: 2 });
await ensurePostgresArticles(admin, corpusRows);
await ensurePostgresStoredArticles(admin, corpusRows);
await admin.end();
await ensureMysqlArticles(benchMysqlUrl(), corpusRows);
const BENCH_SQLITE_FILE = join(CORPUS_DIR, SQLITE_FILE);
await ensureSqliteArticles(BENCH_SQLITE_FILE, corpusRows);

const articles = corpusRows().map(([title, body]) => ({ title, body }));
interface BenchQuery { text: string; source: number }
const queries: BenchQuery[] = Array.from({ length: queryCount }, (_, n) => {
  const source = 1 + ((n * 997) % CORPUS_ROWS);
  const { title, body } = articles[source - 1]!;
  const distinct = [...new Set(`${title} ${body}`.toLowerCase().match(/\p{L}+/gu) ?? [])].filter((w) => w.length >= 3 && !INNODB_STOPWORDS.has(w));
  const words = Array.from({ length: WORDS }, (_, i) => distinct[Math.floor((i * distinct.length) / WORDS)]!);
  return { text: words.join(' '), source };
});

// ---- engines: Quarry's targets from Quarry's discovery, and each engine's naive statement ---------------------------

interface Engine {
  label: string;
  /** The LIKE fallback's bound is its scan (FALLBACK_SCAN_ROWS), not the candidates: it runs once, whatever the bounds. */
  scan?: true;
  executor: PooledExecutor;
  target: SearchTarget;
  /** The engine's own any-word ranking of every match: the ids of its top PAGE. */
  naive(words: string[]): { sql: string; params: unknown[] };
}

async function targetOf(executor: PooledExecutor, table: string, indexed: boolean): Promise<SearchTarget> {
  const schema = await loadSearchSchema(executor, [table], TIMEOUT_MS);
  const target = chooseTargets(schema, { tables: [table] }).find((t) => t.table === table);
  if (!target || (indexed && !target.index)) throw new Error(`${table}: no usable full-text index`);
  return indexed ? target : { ...target, index: null, ftsColumns: null };
}

const pgUrl = benchPgUrl();
const pgExecutor = await createExecutor({
  engine: 'postgres', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1),
  username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), ssl: false, tables: null,
}, LOOPBACK);
const myUrl = benchMysqlUrl();
const myExecutor = await createExecutor({
  engine: 'mysql', host: myUrl.hostname, port: Number(myUrl.port || 3306), database: myUrl.pathname.slice(1),
  username: decodeURIComponent(myUrl.username || 'root'), password: decodeURIComponent(myUrl.password), ssl: false, tables: null,
}, LOOPBACK);
const liteExecutor = await createExecutor({ engine: 'sqlite', host: null, port: null, database: BENCH_SQLITE_FILE, username: null, password: null, ssl: false, tables: null }, LOOPBACK);

const orOf = (words: string[], quote: (w: string) => string) => words.map(quote).join(' | ');
const likeNaive = (engine: 'postgres' | 'mysql' | 'sqlite') => (words: string[]) => {
  const text = engine === 'mysql' ? "CONCAT(title, ' ', body)" : "title || ' ' || body";
  const hits = words.map(() => `(LOWER(${text}) LIKE ?)`);
  let n = 0;
  const numbered = (sql: string) => (engine === 'postgres' ? sql.replace(/\?/g, () => `$${++n}`) : sql);
  const sql = `SELECT id FROM articles WHERE ${hits.join(' OR ')} ORDER BY ${hits.map((h) => `CASE WHEN ${h} THEN 1 ELSE 0 END`).join(' + ')} DESC, id LIMIT ${PAGE}`;
  const patterns = words.map((w) => `%${w}%`);
  return { sql: numbered(sql), params: [...patterns, ...patterns] };
};
const engines: Engine[] = [
  {
    label: 'PostgreSQL GIN expression', executor: pgExecutor, target: await targetOf(pgExecutor, 'articles', true),
    naive: (words) => ({
      sql: `SELECT id FROM articles, to_tsquery('english', $1) q WHERE to_tsvector('english', title || ' ' || body) @@ q ORDER BY ts_rank_cd(to_tsvector('english', title || ' ' || body), q) DESC, id LIMIT ${PAGE}`,
      params: [orOf(words, (w) => `'${w}'`)],
    }),
  },
  {
    label: 'PostgreSQL stored tsvector', executor: pgExecutor, target: await targetOf(pgExecutor, 'articles_tsv', true),
    naive: (words) => ({
      sql: `SELECT id FROM articles_tsv, to_tsquery('english', $1) q WHERE tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT ${PAGE}`,
      params: [orOf(words, (w) => `'${w}'`)],
    }),
  },
  {
    label: 'MariaDB FULLTEXT', executor: myExecutor, target: await targetOf(myExecutor, 'articles', true),
    naive: (words) => ({
      sql: `SELECT id, MATCH(title, body) AGAINST(? IN NATURAL LANGUAGE MODE) AS s FROM articles WHERE MATCH(title, body) AGAINST(? IN NATURAL LANGUAGE MODE) ORDER BY s DESC, id LIMIT ${PAGE}`,
      params: [words.join(' '), words.join(' ')],
    }),
  },
  {
    label: 'SQLite FTS5', executor: liteExecutor, target: await targetOf(liteExecutor, 'articles', true),
    naive: (words) => ({
      sql: `SELECT rowid AS id FROM articles_fts WHERE articles_fts MATCH ? ORDER BY bm25(articles_fts), rowid LIMIT ${PAGE}`,
      params: [words.map((w) => `"${w}"`).join(' OR ')],
    }),
  },
  { label: 'PostgreSQL LIKE fallback', scan: true, executor: pgExecutor, target: await targetOf(pgExecutor, 'articles', false), naive: likeNaive('postgres') },
  { label: 'MariaDB LIKE fallback', scan: true, executor: myExecutor, target: await targetOf(myExecutor, 'articles', false), naive: likeNaive('mysql') },
  { label: 'SQLite LIKE fallback', scan: true, executor: liteExecutor, target: await targetOf(liteExecutor, 'articles', false), naive: likeNaive('sqlite') },
];

// ---- measuring ----------------------------------------------------------------------------------------------------

interface Run { ms: number; ids: number[]; approximate: boolean }

async function quarry(engine: Engine, text: string, bound: number): Promise<Run> {
  const queries = tableQueries(engine.target, compileQuery(text, 'natural').query, engine.executor, bound)!;
  const statement = queries.rank(PAGE, { from: 0, to: PAGE });
  const t0 = performance.now();
  const rows = await engine.executor.query(statement.sql, statement.params, { timeoutMs: TIMEOUT_MS });
  const ms = performance.now() - t0;
  const ranking = queries.decodeRanking(rows, { from: 0, to: PAGE });
  return { ms, ids: ranking.rows.map((r) => Number(r.keys[0])), approximate: ranking.approximate };
}

async function naive(engine: Engine, text: string): Promise<Run> {
  const { sql, params } = engine.naive(text.split(' '));
  const t0 = performance.now();
  const rows = await engine.executor.query<{ id: unknown }>(sql, params, { timeoutMs: TIMEOUT_MS });
  return { ms: performance.now() - t0, ids: rows.map((r) => Number(r.id)), approximate: false };
}

const ms = (n: number) => (Number.isNaN(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(0));
const pct = (part: number, whole: number) => (whole === 0 ? '-' : `${Math.round((100 * part) / whole)}%`);
const inTop = (run: Run, id: number) => run.ids.slice(0, TOP).includes(id);

console.log(`${queryCount} queries of ${WORDS} words from corpus rows (e.g. "${queries[0]!.text}", row ${queries[0]!.source}); naive on the first ${naiveCount}; page ${PAGE}`);
console.log('engine | bound | Quarry p50 / p99 ms | bound reached | naive p50 / p99 ms | p50 ratio | naive top 10 held | source in top 10: Quarry / naive');
for (const engine of engines) {
  // Warm the engine's caches (and the table's pages) before anything is timed.
  for (const query of queries.slice(0, 3)) await quarry(engine, query.text, bounds[0]!);
  const naiveRuns: Run[] = [];
  for (const query of queries.slice(0, naiveCount)) naiveRuns.push(await naive(engine, query.text));
  const naiveTimes = naiveRuns.map((r) => r.ms).sort((a, b) => a - b);
  for (const bound of engine.scan ? bounds.slice(0, 1) : bounds) {
    const runs: Run[] = [];
    for (const query of queries) runs.push(await quarry(engine, query.text, bound));
    const times = runs.map((r) => r.ms).sort((a, b) => a - b);
    const compared = naiveRuns.map((n, i) => ({ n, q: runs[i]! }));
    const held = compared.reduce((sum, { n, q }) => sum + n.ids.slice(0, TOP).filter((id) => q.ids.slice(0, TOP).includes(id)).length, 0);
    const sourceQuarry = compared.filter(({ q }, i) => inTop(q, queries[i]!.source)).length;
    const sourceNaive = compared.filter(({ n }, i) => inTop(n, queries[i]!.source)).length;
    console.log([
      engine.label, engine.scan ? `scan ${FALLBACK_SCAN_ROWS}` : bound, `${ms(percentile(times, 0.5))} / ${ms(percentile(times, 0.99))}`,
      pct(runs.filter((r) => r.approximate).length, runs.length),
      `${ms(percentile(naiveTimes, 0.5))} / ${ms(percentile(naiveTimes, 0.99))}`,
      naiveTimes.length > 0 ? `1/${(percentile(naiveTimes, 0.5) / percentile(times, 0.5)).toFixed(1)}` : '-',
      pct(held, compared.length * TOP),
      `${pct(sourceQuarry, compared.length)} / ${pct(sourceNaive, compared.length)}`,
    ].join(' | '));
  }
}
console.log(`(load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
await Promise.all([pgExecutor.close(), myExecutor.close(), liteExecutor.close()]);
