/**
 * The semantic search figures, in one run:
 *   1. embedding throughput (rows/s) of the local model on the standard corpus (../shared/bench), next to the cost
 *      of embedding one query;
 *   2. vector search latency (p50/p99 over varied query vectors) of the search index (LanceDB, an IVF_FLAT index
 *      from 10,000 vectors) at 10,000 and 100,000 vectors, next to an exact scan of the same vectors in a Float32Array
 *      (what the in-memory engine before the index did), and the index's recall@10 against that exact answer;
 *   3. the server process's memory (RSS) before and after the model is loaded (by indexing a corpus table through
 *      the API), the end-to-end indexing rate the job reports, and GET /health latency while indexing runs.
 *
 *   npx tsx scripts/bench/semantic.ts [rows=2000] [corpusDir]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { LocalEmbeddingProvider } from '../../src/embeddings/index.js';
import { normalize } from '../../src/embeddings/vectors.js';
import { MAX_EMBED_CHARS } from '../../src/search-index/documents.js';
import { IndexStore } from '../../src/search-index/index-store.js';
import { ApiClient } from '../lib/api-client.js';
import { registerUser } from '../lib/accounts.js';
import { CORPUS_DIR, CORPUS_GENERATOR } from './lib/bench-corpus.js';
import { spawnServer } from '../lib/spawn-server.js';
import { percentile } from './lib/stats.js';

const rowsForThroughput = Number(process.argv[2] ?? 2000);
const corpusDir = process.argv[3] ?? CORPUS_DIR;
const serverRows = 500;

const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};
const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);

function corpus(): Array<{ title: string; body: string }> {
  const file = join(corpusDir, 'articles.tsv');
  if (!existsSync(file)) {
    mkdirSync(corpusDir, { recursive: true });
    execFileSync(process.execPath, [CORPUS_GENERATOR, corpusDir], { stdio: 'ignore' });
  }
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [title, body] = line.split('\t');
    return { title, body };
  });
}

/** 1. The local model alone, on its worker thread, in this process. */
async function embeddingThroughput(articles: Array<{ title: string; body: string }>) {
  const provider = new LocalEmbeddingProvider();
  const texts = articles.slice(0, rowsForThroughput).map((a) => `${a.title}\n${a.body}`.slice(0, MAX_EMBED_CHARS));
  const loadStart = performance.now();
  await provider.embed(['warm up']);
  const loadMs = performance.now() - loadStart;
  const queryTimes: number[] = [];
  for (let i = 0; i < 50; i += 1) {
    const start = performance.now();
    await provider.embed([`${articles[i].title.toLowerCase()} near the river`], 'query');
    queryTimes.push(performance.now() - start);
  }
  const start = performance.now();
  await provider.embed(texts, 'bulk');
  const seconds = (performance.now() - start) / 1000;
  await provider.close();
  const chars = texts.reduce((sum, t) => sum + t.length, 0) / texts.length;
  return { rows: texts.length, rowsPerSecond: texts.length / seconds, seconds, loadMs, query: summary(queryTimes), avgChars: chars };
}

/** Seeded random unit vectors (mulberry32), so runs compare. */
function randomUnitMatrix(rows: number, dims: number, seed: number): Float32Array {
  let a = seed;
  const rnd = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const matrix = new Float32Array(rows * dims);
  for (let r = 0; r < rows; r += 1) {
    const row = matrix.subarray(r * dims, (r + 1) * dims);
    for (let i = 0; i < dims; i += 1) row[i] = rnd();
    normalize(row);
  }
  return matrix;
}

/** The exact top `k` of a query over a row-major matrix of unit vectors (dot product = cosine). */
function exactTop(matrix: Float32Array, dims: number, query: Float32Array, k: number): number[] {
  const scores: Array<[number, number]> = [];
  for (let r = 0; r * dims < matrix.length; r += 1) {
    let dot = 0;
    for (let i = 0; i < dims; i += 1) dot += matrix[r * dims + i]! * query[i]!;
    scores.push([r, dot]);
  }
  return scores.sort((x, y) => y[1] - x[1]).slice(0, k).map(([r]) => r);
}

/** 2. The search index's vector search over one table of `n` vectors, against an exact scan of the same vectors. */
async function searchLatency(n: number, dims = 512) {
  const matrix = randomUnitMatrix(n, dims, 7);
  const queries = randomUnitMatrix(200, dims, 99);
  const store = new IndexStore({ uri: mkdtempSync(join(tmpdir(), 'quarry-bench-vectors-')), readConsistencySeconds: 0 });
  const space = await store.ensureSpace('space_bench_test');
  await space.ensureVectorColumn(dims);
  for (let start = 0; start < n; start += 5000) {
    const rows = [];
    for (let r = start; r < Math.min(n, start + 5000); r += 1) {
      rows.push({ rid: `r${r}`, src: 'itb_bench', pk: `{"id":${r}}`, hash: 'h', thash: `t${r}`, text: '', head: '', fields: '{}', vector: Array.from(matrix.subarray(r * dims, (r + 1) * dims)), vmodel: 'bench' });
    }
    await space.append(rows);
  }
  await space.optimize();
  const engine: number[] = [];
  const scan: number[] = [];
  let recall = 0;
  for (let q = 0; q < 200; q += 1) {
    const query = queries.subarray(q * dims, (q + 1) * dims);
    const start = performance.now();
    const hits = await space.searchVector(query, { srcs: ['itb_bench'] }, 20, -1);
    engine.push(performance.now() - start);
    const scanStart = performance.now();
    const exact = exactTop(matrix, dims, query, 10);
    scan.push(performance.now() - scanStart);
    const found = new Set(hits.slice(0, 10).map((h) => Number(h.rid.slice(1))));
    recall += exact.filter((r) => found.has(r)).length / 10;
  }
  await store.close();
  return { n, engine: summary(engine.slice(20)), scan: summary(scan.slice(20)), recall: recall / 200, mib: matrix.byteLength / 2 ** 20 };
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** 3. A real server process: RSS before and after the model loads, the job's own rate, /health latency meanwhile. */
async function serverFigures(articles: Array<{ title: string; body: string }>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-semantic-'));
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', RATE_LIMIT_ENABLED: 'false' });
  const client = new ApiClient(server.url);
  const user = await registerUser(client);
  // The account's own SQLite folder (what uploadSqliteFile fills), written directly: a benchmark's set-up.
  const sqliteDir = join(dataDir, 'sqlite', user.id);
  mkdirSync(sqliteDir, { recursive: true });
  const db = new sqlite3.Database(join(sqliteDir, 'articles.db'));
  const run = (sql: string, params: unknown[] = []) => new Promise<void>((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
  await run('CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, body TEXT)');
  await run('BEGIN');
  for (let i = 0; i < serverRows; i += 1) await run('INSERT INTO articles VALUES (?, ?, ?)', [i + 1, articles[i].title, articles[i].body]);
  await run('COMMIT');
  await new Promise<void>((resolve) => db.close(() => resolve()));

  try {
    const auth = { token: user.token };
    const database = (await client.post('/api/v1/databases', { name: 'Corpus', engine: 'sqlite', database: 'articles.db' }, auth)).body.data.database;
    const health = async (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i += 1) {
        const start = performance.now();
        await fetch(`${server.url}/health`).then((r) => r.arrayBuffer());
        times.push(performance.now() - start);
      }
      return summary(times);
    };
    await health(200);
    const idleHealth = await health(300);
    const before = rssMiB(server.child.pid!);
    const started = await client.patch(`/api/v1/databases/${database.id}/index/tables/articles`, { semantic: true }, auth);
    if (started.status !== 200) throw new Error(JSON.stringify(started.body));
    await new Promise((resolve) => setTimeout(resolve, 3000)); // model loaded, embedding under way
    const busyHealth = await health(300);
    let job;
    for (;;) {
      const table = (await client.get(`/api/v1/databases/${database.id}/index/tables/articles`, auth)).body.data;
      job = table.job;
      if (table.semanticReady || job?.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const after = rssMiB(server.child.pid!);
    return { before, after, job, idleHealth, busyHealth };
  } finally {
    await server.stop();
  }
}

const articles = corpus();
console.log(`corpus: ${articles.length} rows in ${corpusDir}; throughput on the first ${rowsForThroughput}`);
const throughput = await embeddingThroughput(articles);
const latencies = [await searchLatency(10_000), await searchLatency(100_000)];
const server = await serverFigures(articles);

console.log('\n| measure | figure | baseline in the same run |');
console.log('|---|---|---|');
console.log(`| embedding throughput, local model (worker thread), ${throughput.rows} corpus rows (avg ${Math.round(throughput.avgChars)} chars) | ${throughput.rowsPerSecond.toFixed(1)} rows/s (${throughput.seconds.toFixed(1)} s) | one query embedded: p50 ${ms(throughput.query.p50)} ms, p99 ${ms(throughput.query.p99)} ms; model load ${Math.round(throughput.loadMs)} ms |`);
for (const l of latencies) {
  console.log(`| vector search in the index, ${l.n.toLocaleString('en')} vectors x 512 (${l.mib.toFixed(0)} MiB), top 20 | p50 ${ms(l.engine.p50)} ms, p99 ${ms(l.engine.p99)} ms, recall@10 ${l.recall.toFixed(3)} | exact scan of the same vectors in a Float32Array: p50 ${ms(l.scan.p50)} ms, p99 ${ms(l.scan.p99)} ms |`);
}
console.log(`| server RSS with the model loaded (after indexing ${serverRows} rows) | ${server.after.toFixed(0)} MiB | without the model (started, idle): ${server.before.toFixed(0)} MiB |`);
console.log(`| indexing through the API (SQLite source, job's own rate) | ${server.job.ratePerSecond} rows/s, ${server.job.status}, ${server.job.rowsEmbedded} embedded | |`);
console.log(`| GET /health while indexing runs | p50 ${ms(server.busyHealth.p50)} ms, p99 ${ms(server.busyHealth.p99)} ms | idle: p50 ${ms(server.idleHealth.p50)} ms, p99 ${ms(server.idleHealth.p99)} ms |`);
