/**
 * The relevance figure: how well Quarry ranks, on the Cranfield judged collection (../shared/bench/relevance),
 * against a plain BM25 reference computed in the same run (scripts/bench/lib/cranfield.ts).
 *
 * Cranfield is loaded as cranfield(id primary key, title, body) with each engine's own full-text index into
 * PostgreSQL, MariaDB and SQLite, whole (one copy per engine) and split three ways by id (id mod 3: PostgreSQL,
 * MariaDB, SQLite). A Quarry server runs in this process on a fresh store and index; each scenario is one user (one
 * search space) whose databases are connected through the API, so the scenarios never share statistics. Once every
 * table's sync is done, all 225 queries run through POST /api/v1/search (limit 100) and the rankings are scored:
 * nDCG@10 (graded), MAP and recall@100.
 *
 * Runs: natural mode from the index on each engine alone and on the three-way split (the federated answer), and on
 * the split again with one typo per query (withTypo), typo tolerance on (the default) and off;
 * semantic and hybrid on the split (its tables embedded with the configured model); and, for comparison, natural
 * mode answered live by each engine's own full-text search (`live: true`). Every run counts its empty answers and
 * the answers whose query was relaxed (`relaxed`), and two runs quote each query's last four words (withQuotedTail),
 * from the index and live, to show such strict parts relaxed rather than answered with nothing.
 * Targets: natural on each engine >= 0.95 x the reference, the split >= 1.00 x, hybrid >= 1.05 x;
 * the typo run >= 0.90 x the same queries spelt right. So that a method's settings are not chosen on the queries
 * that judge it, the split's natural and hybrid runs, as by default (relevance feedback on the rows ranked,
 * `relevanceFeedback`), without it, and with query expansion instead (RM3 over the whole index, `queryExpansion`),
 * are scored on each half of the queries (odd and even query numbers) against the reference on that half:
 * natural >= 1.15 x, hybrid >= natural.
 *
 *   npx tsx scripts/bench/relevance.ts [--no-semantic]
 * BENCH_PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) and MYSQL_URL (default
 * mysql://root@127.0.0.1:3306/test) say where the engines are.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer } from '../../src/server.js';
import { ApiClient } from '../lib/api-client.js';
import { bm25Reference, HALVES, loadCranfield, measure, type CranfieldDoc, type Half, type Measures } from './lib/cranfield.js';
import { percentile } from './lib/stats.js';

const PG_ADMIN = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const PG_DATABASE = 'quarry_bench_relevance';
const semantic = !process.argv.includes('--no-semantic');

const collection = loadCranfield();
const whole = collection.docs;
const part = (k: number) => whole.filter((d) => d.id % 3 === k);

async function loadPostgres(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [PG_DATABASE]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${PG_DATABASE}`);
  await admin.end();
  const url = new URL(PG_ADMIN);
  url.pathname = `/${PG_DATABASE}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  for (const [table, docs] of [['cranfield', whole], ['cranfield_part', part(0)]] as const) {
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    await client.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, title text NOT NULL, body text NOT NULL)`);
    for (const doc of docs) await client.query(`INSERT INTO ${table} VALUES ($1, $2, $3)`, [doc.id, doc.title, doc.body]);
    await client.query(`CREATE INDEX ${table}_fts ON ${table} USING GIN (to_tsvector('english', title || ' ' || body))`);
  }
  await client.end();
}

async function loadMysql(): Promise<void> {
  const connection = await mysql.createConnection({ uri: MYSQL_URL });
  for (const [table, docs] of [['quarry_cranfield', whole], ['quarry_cranfield_part', part(1)]] as const) {
    await connection.query(`DROP TABLE IF EXISTS ${table}`);
    await connection.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, FULLTEXT (title, body)) ENGINE=InnoDB`);
    for (let i = 0; i < docs.length; i += 200) {
      const batch = docs.slice(i, i + 200);
      await connection.query(`INSERT INTO ${table} (id, title, body) VALUES ?`, [batch.map((d) => [d.id, d.title, d.body])]);
    }
  }
  await connection.end();
}

async function loadSqlite(dir: string, file: string, docs: CranfieldDoc[]): Promise<void> {
  const db = new sqlite3.Database(join(dir, file));
  const run = (sql: string, params: unknown[] = []) => new Promise<void>((resolve, reject) => db.run(sql, params, (error) => (error ? reject(error) : resolve())));
  await run('CREATE TABLE cranfield (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)');
  await run('BEGIN');
  for (const doc of docs) await run('INSERT INTO cranfield VALUES (?, ?, ?)', [doc.id, doc.title, doc.body]);
  await run('COMMIT');
  await run("CREATE VIRTUAL TABLE cranfield_fts USING fts5(title, body, content='cranfield', content_rowid='id')");
  await run("INSERT INTO cranfield_fts(cranfield_fts) VALUES ('rebuild')");
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

/**
 * The query with one typo, the same every run: in its longest word of 5 letters or more (the first of equals), the
 * two letters around the middle swap places, or, when they are the same letter, one of them is dropped.
 */
export function withTypo(query: string): string {
  const words = query.match(/[a-z]+/gi) ?? [];
  const target = words.filter((w) => w.length >= 5).sort((a, b) => b.length - a.length)[0];
  if (!target) return query;
  const i = Math.floor(target.length / 2) - 1;
  const typo = target[i] === target[i + 1]
    ? target.slice(0, i) + target.slice(i + 1)
    : target.slice(0, i) + target[i + 1] + target[i] + target.slice(i + 2);
  return query.replace(new RegExp(`\\b${target}\\b`), typo);
}

/**
 * The query with a strict part: its last four words quoted as a phrase, as a user quoting what they
 * remember. Few rows hold such a phrase, so these answers show how the search relaxes it (`relaxed`).
 */
export function withQuotedTail(query: string): string {
  const words = query.match(/[a-z0-9]+/gi) ?? [];
  if (words.length < 2) return query;
  const tail = words.slice(-4);
  return `${words.slice(0, -4).join(' ')} "${tail.join(' ')}"`.trim();
}

interface Scenario {
  name: string;
  token: string;
  key: string;
  databases: string[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const reference = bm25Reference(collection);
  const referenceMeasures = measure(collection, reference);
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-relevance-'));
  // The SQLite files are made here once and copied into the folder of each account that connects them.
  const sqliteFiles = join(dataDir, 'files');
  mkdirSync(sqliteFiles, { recursive: true });
  await Promise.all([loadPostgres(), loadMysql(), loadSqlite(sqliteFiles, 'cranfield.db', whole), loadSqlite(sqliteFiles, 'cranfield_part.db', part(2))]);
  console.log(`Cranfield: ${whole.length} documents, ${collection.queries.length} queries, loaded into PostgreSQL, MariaDB and SQLite (whole and split by id mod 3)`);

  const config = loadConfig({ NODE_ENV: 'development', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0' });
  const server = await startServer(config, createLogger('warn'));
  const client = new ApiClient(server.url);
  const pgUrl = new URL(PG_ADMIN);
  const myUrl = new URL(MYSQL_URL);
  const connections = {
    postgres: (table: string) => ({ name: `PostgreSQL ${table}`, engine: 'postgres', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: PG_DATABASE, username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), environment: 'test', tables: [table] }),
    mysql: (table: string) => ({ name: `MariaDB ${table}`, engine: 'mysql', host: myUrl.hostname, port: Number(myUrl.port || 3306), database: myUrl.pathname.slice(1), username: decodeURIComponent(myUrl.username || 'root'), password: decodeURIComponent(myUrl.password), environment: 'test', tables: [table] }),
    sqlite: (file: string) => ({ name: `SQLite ${file}`, engine: 'sqlite', database: file, environment: 'test' }),
  };

  async function scenario(name: string, bodies: Array<Record<string, unknown>>, embed: boolean): Promise<Scenario> {
    const email = `relevance-${name}-${Date.now()}@example.com`;
    const registered = await client.post('/api/v1/auth/register', { email, password: 'correct-horse-42', name });
    if (registered.status !== 201) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
    const token = registered.body.data.tokens.accessToken as string;
    const userId = registered.body.data.user.id as string;
    // What the operator does (`npm run user -- plan`): this account may hold enterprise keys.
    await server.services.plans.setPlanByEmail(email, 'enterprise');
    const own = join(config.sqliteDataDir, userId);
    mkdirSync(own, { recursive: true });
    for (const body of bodies) if (body.engine === 'sqlite') copyFileSync(join(sqliteFiles, String(body.database)), join(own, String(body.database)));
    const key = await client.post('/api/v1/keys', { name, environment: 'test', permissions: ['search'], rateLimitTier: 'enterprise' }, { token });
    if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
    const databases: string[] = [];
    for (const body of bodies) {
      const created = await client.post('/api/v1/databases', body, { token });
      if (created.status !== 201) throw new Error(`connect ${name}: ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.data.database.id as string;
      databases.push(id);
      if (embed) {
        const index = await client.get(`/api/v1/databases/${id}/index`, { token });
        for (const table of index.body.data.tables as Array<{ table: string; state: string }>) {
          if (table.state === 'not_indexed') continue;
          const patched = await client.patch(`/api/v1/databases/${id}/index/tables/${encodeURIComponent(table.table)}`, { semantic: true }, { token });
          if (patched.status !== 200) throw new Error(`semantic ${name}: ${patched.status} ${JSON.stringify(patched.body)}`);
        }
      }
    }
    return { name, token, key: key.body.data.secretKey as string, databases };
  }

  /** Polls getDatabaseIndex until every indexable table is searchable (and embedded, when asked). */
  async function ready(s: Scenario, embedded: boolean): Promise<void> {
    for (;;) {
      const states = await Promise.all(s.databases.map(async (id) => (await client.get(`/api/v1/databases/${id}/index`, { token: s.token })).body.data.tables as Array<{ state: string; semanticReady: boolean; job?: { status: string; error: unknown } }>));
      const tables = states.flat().filter((t) => t.state !== 'not_indexed');
      const failed = tables.find((t) => t.job?.status === 'failed');
      if (failed) throw new Error(`sync failed in ${s.name}: ${JSON.stringify(failed.job)}`);
      if (tables.length > 0 && tables.every((t) => t.state === 'ready' && (!embedded || t.semanticReady))) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  async function rankings(s: Scenario, body: Record<string, unknown>, text: (q: string) => string = (q) => q): Promise<{ rankings: Map<number, number[]>; p50: number; approximate: number; empty: number; relaxed: number }> {
    const out = new Map<number, number[]>();
    const times: number[] = [];
    let approximate = 0;
    let empty = 0;
    let relaxed = 0;
    for (const query of collection.queries) {
      const t0 = performance.now();
      const res = await client.post('/api/v1/search', { query: text(query.text), limit: 100, ...body }, { token: s.key });
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`search ${s.name} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
      if (res.body.data.approximate) approximate += 1;
      if ((res.body.data.results as unknown[]).length === 0) empty += 1;
      if ((res.body.data.relaxed as unknown[]).length > 0) relaxed += 1;
      out.set(query.n, (res.body.data.results as Array<{ primaryKey: { id: number } }>).map((r) => Number(r.primaryKey.id)));
    }
    times.sort((a, b) => a - b);
    return { rankings: out, p50: percentile(times, 0.5), approximate, empty, relaxed };
  }

  try {
    const syncStarted = Date.now();
    const scenarios = {
      postgres: await scenario('postgres', [connections.postgres('cranfield')], false),
      mysql: await scenario('mysql', [connections.mysql('quarry_cranfield')], false),
      sqlite: await scenario('sqlite', [connections.sqlite('cranfield.db')], false),
      split: await scenario('split', [connections.postgres('cranfield_part'), connections.mysql('quarry_cranfield_part'), connections.sqlite('cranfield_part.db')], semantic),
    };
    for (const s of Object.values(scenarios)) await ready(s, semantic && s.name === 'split');
    console.log(`Every table synced${semantic ? ' (the split embedded)' : ''} in ${((Date.now() - syncStarted) / 1000).toFixed(1)} s`);

    const rows: Array<{ run: string; m: Measures; target: number | null; p50: number; approximate: number; empty: number; relaxed: number; rankings: Map<number, number[]> }> = [];
    const add = async (run: string, s: Scenario, body: Record<string, unknown>, target: number | null, text?: (q: string) => string) => {
      const result = await rankings(s, body, text);
      rows.push({ run, m: measure(collection, result.rankings), target, p50: result.p50, approximate: result.approximate, empty: result.empty, relaxed: result.relaxed, rankings: result.rankings });
    };
    await add('natural, index: PostgreSQL alone', scenarios.postgres, { searchMode: 'natural' }, 0.95);
    await add('natural, index: MariaDB alone', scenarios.mysql, { searchMode: 'natural' }, 0.95);
    await add('natural, index: SQLite alone', scenarios.sqlite, { searchMode: 'natural' }, 0.95);
    await add('natural, index: split over the three', scenarios.split, { searchMode: 'natural' }, 1.0);
    await add('natural, index: split, one typo per query', scenarios.split, { searchMode: 'natural' }, null, withTypo);
    await add('natural, index: split, last four words quoted', scenarios.split, { searchMode: 'natural' }, null, withQuotedTail);
    await add('natural, index: split, relevance feedback off', scenarios.split, { searchMode: 'natural', relevanceFeedback: false }, null);
    await add('natural, index: split, query expansion (RM3)', scenarios.split, { searchMode: 'natural', queryExpansion: true }, null);
    await add('natural, index: split, one typo per query, typo tolerance off', scenarios.split, { searchMode: 'natural', typoTolerance: false }, null, withTypo);
    if (semantic) {
      await add('semantic, index: split', scenarios.split, { searchMode: 'semantic' }, null);
      await add('hybrid, index: split', scenarios.split, { searchMode: 'hybrid' }, 1.05);
      await add('hybrid, index: split, relevance feedback off', scenarios.split, { searchMode: 'hybrid', relevanceFeedback: false }, null);
      await add('hybrid, index: split, query expansion (RM3)', scenarios.split, { searchMode: 'hybrid', queryExpansion: true }, null);
    }
    await add('natural, live: PostgreSQL alone', scenarios.postgres, { searchMode: 'natural', live: true }, null);
    await add('natural, live: MariaDB alone', scenarios.mysql, { searchMode: 'natural', live: true }, null);
    await add('natural, live: SQLite alone', scenarios.sqlite, { searchMode: 'natural', live: true }, null);
    await add('natural, live: split over the three', scenarios.split, { searchMode: 'natural', live: true }, null);
    await add('natural, live: SQLite alone, last four words quoted', scenarios.sqlite, { searchMode: 'natural', live: true }, null, withQuotedTail);

    const f = (x: number) => x.toFixed(4);
    const clean = rows.find((r) => r.run === 'natural, index: split over the three')!.m.ndcg10;
    const typo = rows.find((r) => r.run === 'natural, index: split, one typo per query')!.m.ndcg10;
    console.log(`\nReference: plain BM25 over the whole collection (k1 1.2, b 0.75, no stemming, no stop words), this run: nDCG@10 ${f(referenceMeasures.ndcg10)}, MAP ${f(referenceMeasures.map)}, recall@100 ${f(referenceMeasures.recall100)}\n`);
    console.log('| run | nDCG@10 | x reference | MAP | recall@100 | approximate answers | empty answers | relaxed answers | p50 ms | target | verdict |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const ratio = row.m.ndcg10 / referenceMeasures.ndcg10;
      const verdict = row.target === null ? '' : ratio >= row.target ? 'met' : 'NOT MET';
      console.log(`| ${row.run} | ${f(row.m.ndcg10)} | ${ratio.toFixed(3)} | ${f(row.m.map)} | ${f(row.m.recall100)} | ${row.approximate}/${collection.queries.length} | ${row.empty}/${collection.queries.length} | ${row.relaxed}/${collection.queries.length} | ${row.p50.toFixed(1)} | ${row.target === null ? '' : `>= ${row.target.toFixed(2)}`} | ${verdict} |`);
    }
    // Each ranking method on the two halves of the queries (odd and even query numbers), each against the
    // reference on the same half: a method's settings are chosen on one half, and what holds on the other is kept.
    const halves = Object.keys(HALVES) as Half[];
    const byHalf = rows.filter((row) => row.run.includes('index: split') && !row.run.includes('typo') && !row.run.includes('quoted'));
    console.log(`\nHalves of the queries: ${halves.map((h) => `${h} ${collection.queries.filter(HALVES[h]).length}`).join(', ')}\n`);
    console.log(`| run | ${halves.map((h) => `${h} nDCG@10 | ${h} x reference | ${h} MAP | ${h} recall@100`).join(' | ')} |`);
    console.log(`|---|${halves.map(() => '---|---|---|---|').join('')}`);
    const halfRow = (run: string, ranked: Map<number, number[]>) => {
      const cells = halves.map((h) => {
        const m = measure(collection, ranked, h);
        const base = measure(collection, reference, h).ndcg10;
        return `${f(m.ndcg10)} | ${(m.ndcg10 / base).toFixed(3)} | ${f(m.map)} | ${f(m.recall100)}`;
      });
      console.log(`| ${run} | ${cells.join(' | ')} |`);
    };
    halfRow('reference (plain BM25)', reference);
    for (const row of byHalf) halfRow(row.run, row.rankings);
    // The targets per half: natural >= 1.15 x the reference, hybrid >= natural (each with and without RM3).
    const ndcgOf = (run: string, h: Half) => {
      const row = rows.find((r) => r.run === run);
      return row ? measure(collection, row.rankings, h).ndcg10 : null;
    };
    for (const h of halves) {
      const base = measure(collection, reference, h).ndcg10;
      const verdicts: string[] = [];
      for (const suffix of ['', ', relevance feedback off', ', query expansion (RM3)']) {
        const natural = ndcgOf(`natural, index: split over the three${suffix}`, h) ?? ndcgOf(`natural, index: split${suffix}`, h);
        const hybrid = ndcgOf(`hybrid, index: split${suffix}`, h);
        if (natural !== null) verdicts.push(`natural${suffix} ${(natural / base).toFixed(3)} x (>= 1.15: ${natural / base >= 1.15 ? 'met' : 'NOT MET'})`);
        if (natural !== null && hybrid !== null) verdicts.push(`hybrid${suffix} ${f(hybrid)} vs natural ${f(natural)} (>=: ${hybrid >= natural ? 'met' : 'NOT MET'})`);
      }
      console.log(`${h} half: ${verdicts.join('; ')}`);
    }
    console.log(`\nTypo run: nDCG@10 ${f(typo)} against ${f(clean)} for the same queries spelt right: ${(typo / clean).toFixed(3)} x (target >= 0.90: ${typo / clean >= 0.9 ? 'met' : 'NOT MET'})`);
    console.log(`\nTotal ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
