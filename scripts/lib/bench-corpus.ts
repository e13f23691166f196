/**
 * Where the search benchmarks find the standard corpus (../shared/bench) and how they load it: the generated files,
 * and the corpus as `articles` in PostgreSQL (a GIN expression index; `articles_tsv` with a stored tsvector column),
 * MariaDB (FULLTEXT) and SQLite (FTS5). One place, so every script measures the same data. A table that already
 * holds the corpus and its index is reused.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import sqlite3 from 'sqlite3';

/** gen-corpus.cjs's output (articles.tsv, queries.json), generated once. */
export const CORPUS_DIR = join(tmpdir(), 'quarry-bench-corpus');
export const CORPUS_ROWS = 100_000;

/** The database holding the corpus as `articles`; BENCH_PG_URL overrides. */
export const benchPgUrl = (): URL => new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/quarry_bench');
/** The MariaDB / MySQL database holding the corpus as `articles`; BENCH_MYSQL_URL overrides. */
export const benchMysqlUrl = (): URL => new URL(process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/quarry_bench');
/** The SQLite file holding the corpus as `articles` and its FTS5 index `articles_fts`. */
export const BENCH_SQLITE_FILE = join(CORPUS_DIR, 'articles.sqlite');

export interface CorpusQueries {
  rare200: string[];
  common200: string[];
}

/** shared/bench/gen-corpus.cjs beside the checkout, or beside a folder holding it (a worktree under /work/wt). */
function corpusGenerator(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'shared/bench/gen-corpus.cjs');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('shared/bench/gen-corpus.cjs not found above the checkout');
}

/** The corpus's queries, generating the corpus first when it is missing. */
export function corpusQueries(): CorpusQueries {
  if (!existsSync(join(CORPUS_DIR, 'queries.json')) || !existsSync(join(CORPUS_DIR, 'articles.tsv'))) {
    console.log(`generating the corpus in ${CORPUS_DIR}`);
    execFileSync(process.execPath, [corpusGenerator(), CORPUS_DIR], { stdio: 'inherit' });
  }
  return JSON.parse(readFileSync(join(CORPUS_DIR, 'queries.json'), 'utf8')) as CorpusQueries;
}

/** The articles in order; row n (from 1) is the corpus's line n. */
export function corpusArticles(): Array<{ title: string; body: string }> {
  corpusQueries();
  return readFileSync(join(CORPUS_DIR, 'articles.tsv'), 'utf8').split('\n').filter(Boolean).map((line) => {
    const [title, body] = line.split('\t');
    return { title: title ?? '', body: body ?? '' };
  });
}

/**
 * Creates the PostgreSQL bench database when missing and sets its max_parallel_workers_per_gather (a number, or
 * 'server' to keep PostgreSQL's own), before any path connects: a database's settings apply to later sessions.
 */
export async function ensurePgDatabase(url: URL, parallelWorkers: string): Promise<void> {
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const name = url.pathname.slice(1);
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  const quoted = `"${name.replace(/"/g, '""')}"`;
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${quoted}`);
  await admin.query(parallelWorkers === 'server'
    ? `ALTER DATABASE ${quoted} RESET max_parallel_workers_per_gather`
    : `ALTER DATABASE ${quoted} SET max_parallel_workers_per_gather = ${Number(parallelWorkers)}`);
  await admin.end();
}

async function pgHolds(pool: pg.Pool, table: string, index: string): Promise<boolean> {
  const present = await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [`public.${table}`]);
  if (!present.rows[0].present) return false;
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
  const indexed = await pool.query('SELECT 1 FROM pg_indexes WHERE tablename = $1 AND indexname = $2', [table, index]);
  return rows[0].n === CORPUS_ROWS && indexed.rowCount === 1;
}

/** unnest batches: pg has no COPY FROM STDIN without an add-on. */
async function pgLoad(pool: pg.Pool, table: string): Promise<void> {
  const articles = corpusArticles();
  for (let start = 0; start < articles.length; start += 5000) {
    const batch = articles.slice(start, start + 5000);
    await pool.query(`INSERT INTO ${table} (id, title, body) SELECT * FROM unnest($1::int[], $2::text[], $3::text[])`, [
      batch.map((_, i) => start + i + 1), batch.map((b) => b.title), batch.map((b) => b.body),
    ]);
  }
}

/** articles(id primary key, title, body) with a GIN index on to_tsvector('english', title || ' ' || body). */
export async function ensurePgArticles(pool: pg.Pool): Promise<void> {
  if (await pgHolds(pool, 'articles', 'articles_fts')) return;
  console.log('loading 100,000 articles into PostgreSQL (once; later runs reuse the table)');
  await pool.query('DROP TABLE IF EXISTS articles');
  await pool.query('CREATE TABLE articles (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)');
  await pgLoad(pool, 'articles');
  await pool.query("CREATE INDEX articles_fts ON articles USING GIN (to_tsvector('english', title || ' ' || body))");
  // VACUUM as after any bulk load: hint bits and the visibility map set now, not during the first measured queries.
  await pool.query('VACUUM ANALYZE articles');
}

/** articles_tsv: the same rows with a stored, generated tsvector column and a GIN index on it. */
export async function ensurePgStoredArticles(pool: pg.Pool): Promise<void> {
  if (await pgHolds(pool, 'articles_tsv', 'articles_tsv_fts')) return;
  console.log('loading 100,000 articles into PostgreSQL with a stored tsvector (once)');
  await pool.query('DROP TABLE IF EXISTS articles_tsv');
  await pool.query(`CREATE TABLE articles_tsv (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', title || ' ' || body)) STORED)`);
  await pgLoad(pool, 'articles_tsv');
  await pool.query('CREATE INDEX articles_tsv_fts ON articles_tsv USING GIN (tsv)');
  await pool.query('VACUUM ANALYZE articles_tsv');
}

/** The MariaDB / MySQL database and articles(id primary key, title, body) with FULLTEXT(title, body). */
export async function ensureMysqlArticles(url: URL): Promise<void> {
  const connection = await mysql.createConnection({
    host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password), multipleStatements: false,
  });
  try {
    const name = url.pathname.slice(1);
    const quoted = `\`${name.replace(/`/g, '``')}\``;
    await connection.query(`CREATE DATABASE IF NOT EXISTS ${quoted}`);
    await connection.query(`USE ${quoted}`);
    const [tables] = await connection.query<mysql.RowDataPacket[]>("SHOW TABLES LIKE 'articles'");
    if (tables.length === 1) {
      const [[count]] = await connection.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM articles');
      const [indexes] = await connection.query<mysql.RowDataPacket[]>("SHOW INDEX FROM articles WHERE Index_type = 'FULLTEXT'");
      if (Number(count!.n) === CORPUS_ROWS && indexes.length > 0) return;
    }
    console.log('loading 100,000 articles into MariaDB (once; later runs reuse the table)');
    await connection.query('DROP TABLE IF EXISTS articles');
    await connection.query('CREATE TABLE articles (id INT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL) ENGINE=InnoDB');
    const articles = corpusArticles();
    for (let start = 0; start < articles.length; start += 2000) {
      const batch = articles.slice(start, start + 2000).map((a, i) => [start + i + 1, a.title, a.body]);
      await connection.query('INSERT INTO articles (id, title, body) VALUES ?', [batch]);
    }
    await connection.query('ALTER TABLE articles ADD FULLTEXT INDEX articles_fts (title, body)');
    await connection.query('ANALYZE TABLE articles');
  } finally {
    await connection.end();
  }
}

function sqliteRun(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
}

function sqliteGet<Row>(db: sqlite3.Database, sql: string): Promise<Row | undefined> {
  return new Promise((resolve, reject) => db.get(sql, (err: Error | null, row: Row) => (err ? reject(err) : resolve(row))));
}

/** BENCH_SQLITE_FILE: articles(id integer primary key, title, body) and an external-content FTS5 index over it. */
export async function ensureSqliteArticles(file = BENCH_SQLITE_FILE): Promise<void> {
  const db = new sqlite3.Database(file);
  try {
    const held = await sqliteGet<{ n: number }>(db,
      "SELECT (SELECT count(*) FROM articles) AS n WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'articles_fts')").catch(() => undefined);
    if (held?.n === CORPUS_ROWS) return;
    console.log('loading 100,000 articles into SQLite (once; later runs reuse the file)');
    await sqliteRun(db, 'DROP TABLE IF EXISTS articles_fts');
    await sqliteRun(db, 'DROP TABLE IF EXISTS articles');
    await sqliteRun(db, 'CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)');
    await sqliteRun(db, 'BEGIN');
    const articles = corpusArticles();
    for (let i = 0; i < articles.length; i++) {
      await sqliteRun(db, 'INSERT INTO articles (id, title, body) VALUES (?, ?, ?)', [i + 1, articles[i]!.title, articles[i]!.body]);
    }
    await sqliteRun(db, 'COMMIT');
    await sqliteRun(db, "CREATE VIRTUAL TABLE articles_fts USING fts5(title, body, content='articles', content_rowid='id')");
    await sqliteRun(db, "INSERT INTO articles_fts (articles_fts) VALUES ('rebuild')");
    await sqliteRun(db, 'ANALYZE');
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}
