/**
 * The standard search corpus (../shared/bench: 100,000 articles, rare and common query sets) and where the search
 * benchmarks load it: PostgreSQL, MariaDB and SQLite, each as articles(id primary key, title, body) with that
 * engine's own full-text index. One place, so every script measures the same data; a table that already holds the
 * corpus is reused.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import sqlite3 from 'sqlite3';

/** gen-corpus.cjs's output (articles.tsv, queries.json), generated once. */
export const CORPUS_DIR = join(tmpdir(), 'quarry-bench-corpus');
export const CORPUS_ROWS = 100_000;

/** The database holding the corpus as `articles`; BENCH_PG_URL overrides. */
export const benchPgUrl = (): URL => new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/quarry_bench');
/** MariaDB's database for the corpus (`articles` there); BENCH_MYSQL_URL overrides. */
export const benchMysqlUrl = (): URL => new URL(process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
/** The SQLite file holding the corpus (in CORPUS_DIR, which a benchmark's server takes as its SQLITE_DATA_DIR). */
export const SQLITE_FILE = 'articles.sqlite';

export interface CorpusQueries {
  rare200: string[];
  common200: string[];
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
/** The corpus generator beside the repository (../shared/bench), as every benchmark reads it. */
export const CORPUS_GENERATOR = join(root, '../shared/bench/gen-corpus.cjs');

/** The corpus files, generated on first use (about 3 s, byte-identical every time). */
export function ensureCorpus(): CorpusQueries {
  if (!existsSync(join(CORPUS_DIR, 'queries.json')) || !existsSync(join(CORPUS_DIR, 'articles.tsv'))) {
    console.log(`generating the corpus in ${CORPUS_DIR}`);
    execFileSync(process.execPath, [CORPUS_GENERATOR, CORPUS_DIR], { stdio: 'inherit' });
  }
  return JSON.parse(readFileSync(join(CORPUS_DIR, 'queries.json'), 'utf8')) as CorpusQueries;
}

/** The articles as [title, body], id = position + 1. */
export function articles(): Array<[string, string]> {
  return readFileSync(join(CORPUS_DIR, 'articles.tsv'), 'utf8').split('\n').filter(Boolean).map((line) => {
    const [title, body] = line.split('\t');
    return [title ?? '', body ?? ''];
  });
}

/**
 * Verbose natural-language queries built from the corpus itself, the same every run: query i takes 8 distinct words
 * of 4 letters or more, spread over the body of a row chosen by a fixed stride (as a person pasting a sentence would
 * search). Any word may match, and most rows contain some of them.
 */
export function verboseQueries(rows: Array<[string, string]>, count: number, words = 8): string[] {
  const queries: string[] = [];
  for (let i = 0; queries.length < count; i += 1) {
    const [, body] = rows[(i * 7919) % rows.length]!;
    const candidates = [...new Set(body.toLowerCase().match(/[a-z]{4,}/g) ?? [])];
    if (candidates.length < words) continue;
    const step = candidates.length / words;
    queries.push(Array.from({ length: words }, (_, k) => candidates[Math.floor(k * step)]).join(' '));
  }
  return queries;
}

/** Loads the corpus into PostgreSQL (GIN on to_tsvector('english', title || ' ' || body)) unless it is there. */
export async function ensurePostgresArticles(pool: pg.Pool, rows: () => Array<[string, string]>): Promise<void> {
  const present = await pool.query("SELECT to_regclass('public.articles') IS NOT NULL AS present");
  if (present.rows[0].present) {
    const { rows: counted } = await pool.query('SELECT count(*)::int AS n FROM articles');
    const indexed = await pool.query("SELECT 1 FROM pg_indexes WHERE tablename = 'articles' AND indexname = 'articles_fts'");
    if (counted[0].n === CORPUS_ROWS && indexed.rowCount === 1) return;
  }
  console.log('loading 100,000 articles into PostgreSQL (once; later runs reuse the table)');
  const all = rows();
  await pool.query('DROP TABLE IF EXISTS articles');
  await pool.query('CREATE TABLE articles (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)');
  for (let start = 0; start < all.length; start += 5000) {
    const batch = all.slice(start, start + 5000);
    await pool.query('INSERT INTO articles (id, title, body) SELECT * FROM unnest($1::int[], $2::text[], $3::text[])', [
      batch.map((_, i) => start + i + 1), batch.map((b) => b[0]), batch.map((b) => b[1]),
    ]);
  }
  await pool.query("CREATE INDEX articles_fts ON articles USING GIN (to_tsvector('english', title || ' ' || body))");
  // VACUUM as after any bulk load: hint bits and the visibility map set now, not during the first measured queries.
  await pool.query('VACUUM ANALYZE articles');
}

/** articles_tsv: the same rows with a stored, generated tsvector column and a GIN index on it, unless it is there. */
export async function ensurePostgresStoredArticles(pool: pg.Pool, rows: () => Array<[string, string]>): Promise<void> {
  const present = await pool.query("SELECT to_regclass('public.articles_tsv') IS NOT NULL AS present");
  if (present.rows[0].present) {
    const { rows: counted } = await pool.query('SELECT count(*)::int AS n FROM articles_tsv');
    const indexed = await pool.query("SELECT 1 FROM pg_indexes WHERE tablename = 'articles_tsv' AND indexname = 'articles_tsv_fts'");
    if (counted[0].n === CORPUS_ROWS && indexed.rowCount === 1) return;
  }
  console.log('loading 100,000 articles into PostgreSQL with a stored tsvector (once)');
  const all = rows();
  await pool.query('DROP TABLE IF EXISTS articles_tsv');
  await pool.query(`CREATE TABLE articles_tsv (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', title || ' ' || body)) STORED)`);
  for (let start = 0; start < all.length; start += 5000) {
    const batch = all.slice(start, start + 5000);
    await pool.query('INSERT INTO articles_tsv (id, title, body) SELECT * FROM unnest($1::int[], $2::text[], $3::text[])', [
      batch.map((_, i) => start + i + 1), batch.map((b) => b[0]), batch.map((b) => b[1]),
    ]);
  }
  await pool.query('CREATE INDEX articles_tsv_fts ON articles_tsv USING GIN (tsv)');
  await pool.query('VACUUM ANALYZE articles_tsv');
}

/** Creates the PostgreSQL database of the corpus if it is missing. */
export async function ensurePostgresDatabase(url: URL): Promise<void> {
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const name = url.pathname.slice(1);
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  await admin.end();
}

/** Loads the corpus into MariaDB (InnoDB with FULLTEXT (title, body)) unless it is there. */
export async function ensureMysqlArticles(url: URL, rows: () => Array<[string, string]>): Promise<void> {
  const connection = await mysql.createConnection({ uri: url.toString() });
  try {
    const [tables] = await connection.query("SELECT COUNT(*) AS n FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'articles' AND index_type = 'FULLTEXT'");
    if (Number((tables as Array<{ n: number }>)[0]!.n) > 0) {
      const [counted] = await connection.query('SELECT COUNT(*) AS n FROM articles');
      if (Number((counted as Array<{ n: number }>)[0]!.n) === CORPUS_ROWS) return;
    }
    console.log('loading 100,000 articles into MariaDB (once; later runs reuse the table)');
    const all = rows();
    await connection.query('DROP TABLE IF EXISTS articles');
    await connection.query('CREATE TABLE articles (id INT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL) ENGINE=InnoDB');
    for (let start = 0; start < all.length; start += 2000) {
      const batch = all.slice(start, start + 2000).map((b, i) => [start + i + 1, b[0], b[1]]);
      await connection.query('INSERT INTO articles (id, title, body) VALUES ?', [batch]);
    }
    await connection.query('ALTER TABLE articles ADD FULLTEXT articles_fts (title, body)');
  } finally {
    await connection.end();
  }
}

/** Loads the corpus into a SQLite file (with an external-content FTS5 index) unless it is there. */
export async function ensureSqliteArticles(path: string, rows: () => Array<[string, string]>): Promise<void> {
  const db = new sqlite3.Database(path);
  const run = (sql: string, params: unknown[] = []) => new Promise<void>((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())));
  const get = (sql: string) => new Promise<Record<string, unknown> | undefined>((resolve, reject) => db.get(sql, (error, row) => (error ? reject(error) : resolve(row as Record<string, unknown> | undefined))));
  try {
    const fts = await get("SELECT 1 AS present FROM sqlite_master WHERE name = 'articles_fts'");
    if (fts && Number((await get('SELECT COUNT(*) AS n FROM articles'))?.n) === CORPUS_ROWS) return;
    console.log('loading 100,000 articles into SQLite (once; later runs reuse the file)');
    await run('DROP TABLE IF EXISTS articles_fts');
    await run('DROP TABLE IF EXISTS articles');
    await run('CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)');
    await run('BEGIN');
    const all = rows();
    for (let i = 0; i < all.length; i += 1) await run('INSERT INTO articles VALUES (?, ?, ?)', [i + 1, all[i]![0], all[i]![1]]);
    await run('COMMIT');
    await run("CREATE VIRTUAL TABLE articles_fts USING fts5(title, body, content='articles', content_rowid='id')");
    await run("INSERT INTO articles_fts(articles_fts) VALUES ('rebuild')");
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** The 1,000,000-row variant of the corpus: `articles` ten times over, in a table of its own. */
export const MILLION_ROWS = 1_000_000;
export const MILLION_TABLE = 'articles_1m';

/**
 * Loads articles_1m unless it is there: the 100,000 articles of `articles` (load it first) copied ten times, copy k
 * (0..9) with ids offset by k x 100,000, so ids run 1..1,000,000 and every row of the corpus appears ten times; the
 * same columns and the same GIN index on to_tsvector('english', title || ' ' || body).
 */
export async function ensurePostgresMillion(url: URL): Promise<void> {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const present = await client.query(`SELECT to_regclass('public.${MILLION_TABLE}') IS NOT NULL AS present`);
    if (present.rows[0].present) {
      const { rows: counted } = await client.query(`SELECT count(*)::int AS n FROM ${MILLION_TABLE}`);
      const indexed = await client.query(`SELECT 1 FROM pg_indexes WHERE tablename = '${MILLION_TABLE}' AND indexname = '${MILLION_TABLE}_fts'`);
      if (counted[0].n === MILLION_ROWS && indexed.rowCount === 1) return;
    }
    console.log(`loading ${MILLION_ROWS.toLocaleString('en')} rows (the corpus ten times) into PostgreSQL's ${MILLION_TABLE} (once; later runs reuse it)`);
    await client.query(`DROP TABLE IF EXISTS ${MILLION_TABLE}`);
    await client.query(`CREATE TABLE ${MILLION_TABLE} (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)`);
    await client.query(`INSERT INTO ${MILLION_TABLE} (id, title, body)
      SELECT a.id + copy * ${CORPUS_ROWS}, a.title, a.body FROM generate_series(0, 9) AS copy, articles a ORDER BY copy, a.id`);
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query(`CREATE INDEX ${MILLION_TABLE}_fts ON ${MILLION_TABLE} USING GIN (to_tsvector('english', title || ' ' || body))`);
    await client.query(`VACUUM ANALYZE ${MILLION_TABLE}`);
  } finally {
    await client.end();
  }
}
