/**
 * The search-speed anchor: Quarry against Sphinx (Debian's sphinxsearch, bm25 ranker) on this machine, in one run,
 * on the same PostgreSQL table of the standard corpus (../shared/bench: 100,000 articles) and the same queries.
 *
 * - Quarry runs built, as `npm start` runs it, with the result cache and the rate limiter off; the table is connected
 *   and its first sync timed from the connection to the table being searchable. Sphinx's indexer reads the same
 *   table; its time is from its start to its exit. Both report the index's bytes on disk.
 * - Three query sets, a new query for every request so no cache flatters a figure: verbose (8 words of a corpus row,
 *   any word may match), common (one of the corpus's 200 common words) and rare (two of its 200 rare words).
 *   Quarry answers from its index (natural mode, limit 10); Sphinx answers `w1 | w2 | ...` with limit 10.
 * - Latency at concurrency 1 takes turns query by query (who goes first alternates), so both see the machine alike.
 *   Throughput at concurrency 4 and 16 runs each system for a fixed number of requests, in alternating rounds; the
 *   median round is printed, with the p99 of all its requests.
 * - RSS of both servers after the run.
 *
 *   npm run bench:anchor -- [requests per set at concurrency 1, default 200]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { articles, benchPgUrl, CORPUS_ROWS, ensureCorpus, ensurePostgresArticles, ensurePostgresDatabase, verboseQueries } from './lib/bench-corpus.js';
import { spawnServer } from './lib/spawn-server.js';
import { rssOf, startSphinx } from './lib/sphinx.js';
import { setAccount } from './lib/store-admin.js';
import { median, percentile } from './lib/stats.js';

const perSet = Number(process.argv[2] ?? 200);
if (!Number.isInteger(perSet) || perSet < 20) {
  console.error('usage: npm run bench:anchor -- [requests per query set at concurrency 1, >= 20]');
  process.exit(2);
}
const LIMIT = 10;
const WARMUP = 20;
const ROUNDS = 3;
const THROUGHPUT_REQUESTS = 200;

type Search = (words: string[]) => Promise<void>;

/** Bytes of every file below a folder. */
function treeBytes(dir: string): number {
  let sum = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    sum += entry.isDirectory() ? treeBytes(path) : statSync(path).size;
  }
  return sum;
}

/** `count` requests through `workers` concurrent callers, each taking the next query; searches/s and latencies. */
async function drive(searches: Search[], queries: string[][], count: number): Promise<{ perSecond: number; times: number[] }> {
  let next = 0;
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(searches.map(async (search) => {
    for (let i = next++; i < count; i = next++) {
      const t0 = performance.now();
      await search(queries[i % queries.length]!);
      times.push(performance.now() - t0);
    }
  }));
  return { perSecond: count / ((performance.now() - started) / 1000), times: times.sort((a, b) => a - b) };
}

async function main(): Promise<void> {
  const corpus = ensureCorpus();
  const rows = articles();
  const pgUrl = benchPgUrl();
  await ensurePostgresDatabase(pgUrl);
  const pool = new pg.Pool({ connectionString: pgUrl.toString(), max: 2 });
  await ensurePostgresArticles(pool, () => rows);
  await pool.end();

  const total = WARMUP + perSet;
  const sets: Record<string, string[][]> = {
    verbose: verboseQueries(rows, total).map((query) => query.split(' ')),
    common: Array.from({ length: total }, (_, i) => [corpus.common200[i % corpus.common200.length]!]),
    rare: Array.from({ length: total }, (_, i) => [corpus.rare200[(2 * i) % corpus.rare200.length]!, corpus.rare200[(2 * i + 1) % corpus.rare200.length]!]),
  };

  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-anchor-'));
  const server = await spawnServer({ DATA_DIR: dataDir, RATE_LIMIT_ENABLED: 'false', SEARCH_CACHE_TTL_MS: '0', NODE_ENV: 'development' }, { built: true });
  const sphinxHolder: { stop?: () => Promise<void> } = {};
  try {
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method, headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() as { data: any } };
    };
    const email = `anchor-${Date.now()}@example.com`;
    const registered = await call('POST', '/api/v1/auth/register', null, { email, password: 'correct-horse-42', name: 'anchor' });
    await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, email, { plan: 'enterprise' });
    const token = registered.body.data.tokens.accessToken as string;
    const key = (await call('POST', '/api/v1/keys', token, { name: 'anchor', environment: 'live', permissions: ['search'], rateLimitTier: 'enterprise' })).body.data.secretKey as string;

    const connectedAt = performance.now();
    const created = await call('POST', '/api/v1/databases', token, {
      name: 'Articles', engine: 'postgres', environment: 'live', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), database: pgUrl.pathname.slice(1),
      username: decodeURIComponent(pgUrl.username || 'postgres'), password: decodeURIComponent(pgUrl.password), tables: ['articles'],
    });
    if (created.status !== 201) throw new Error(`connect: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.data.database.id as string;
    for (;;) {
      const table = (await call('GET', `/api/v1/databases/${id}/index/tables/articles`, token)).body.data;
      if (table.job?.status === 'failed') throw new Error(`sync failed: ${JSON.stringify(table.job)}`);
      if (table.state === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const quarrySync = (performance.now() - connectedAt) / 1000;
    const quarryBytes = treeBytes(join(dataDir, 'index'));

    const sphinx = await startSphinx(pgUrl);
    sphinxHolder.stop = sphinx.stop;
    const quarrySearch: Search = async (words) => {
      const res = await fetch(`${server.url}/api/v1/search`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query: words.join(' '), databases: [id], limit: LIMIT }),
      });
      const body = await res.json() as { data?: { databases: Array<{ source: string }> } };
      if (res.status !== 200 || body.data?.databases[0]?.source !== 'index') throw new Error(`search: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    };
    const sphinxSearch: Search = async (words) => void (await sphinx.search(words, LIMIT));

    const latency: string[] = [];
    const throughput: string[] = [];
    for (const [name, queries] of Object.entries(sets)) {
      const q: number[] = [];
      const s: number[] = [];
      for (const [i, words] of queries.entries()) {
        const order: Array<[Search, number[]]> = i % 2 === 0 ? [[quarrySearch, q], [sphinxSearch, s]] : [[sphinxSearch, s], [quarrySearch, q]];
        for (const [search, into] of order) {
          const t0 = performance.now();
          await search(words);
          if (i >= WARMUP) into.push(performance.now() - t0);
        }
      }
      q.sort((a, b) => a - b);
      s.sort((a, b) => a - b);
      const [qp50, sp50] = [percentile(q, 0.5), percentile(s, 0.5)];
      const bound = name === 'verbose' ? 2 * sp50 : Math.max(3 * sp50, 5);
      latency.push(`| ${name} | ${qp50.toFixed(1)} | ${percentile(q, 0.99).toFixed(1)} | ${sp50.toFixed(1)} | ${percentile(s, 0.99).toFixed(1)} | ${(qp50 / sp50).toFixed(2)} | ${name === 'verbose' ? '<= 2 x' : '<= 3 x or 5 ms'}: ${qp50 <= bound ? 'met' : 'NOT MET'} |`);

      for (const concurrency of [4, 16]) {
        const quarryCallers = Array.from({ length: concurrency }, () => quarrySearch);
        // One connection per caller, opened one after another (searchd drops handshakes that arrive all at once).
        const sphinxConnections: Array<Awaited<ReturnType<typeof sphinx.connect>>> = [];
        for (let i = 0; i < concurrency; i += 1) sphinxConnections.push(await sphinx.connect());
        const sphinxCallers: Search[] = sphinxConnections.map((c) => async (words) => void (await c.search(words, LIMIT)));
        const rounds: Record<'quarry' | 'sphinx', Array<{ perSecond: number; times: number[] }>> = { quarry: [], sphinx: [] };
        for (let round = 0; round < ROUNDS; round += 1) {
          rounds.quarry.push(await drive(quarryCallers, queries, THROUGHPUT_REQUESTS));
          rounds.sphinx.push(await drive(sphinxCallers, queries, THROUGHPUT_REQUESTS));
        }
        await Promise.all(sphinxConnections.map((c) => c.close()));
        const [qps, sps] = [median(rounds.quarry.map((r) => r.perSecond)), median(rounds.sphinx.map((r) => r.perSecond))];
        const p99 = (list: Array<{ times: number[] }>) => percentile(list.flatMap((r) => r.times).sort((a, b) => a - b), 0.99);
        const target = concurrency === 4 ? `>= 0.5 x: ${qps >= 0.5 * sps ? 'met' : 'NOT MET'}` : `p99 <= 10 x p50 (${(10 * qp50).toFixed(0)} ms): ${p99(rounds.quarry) <= 10 * qp50 ? 'met' : 'NOT MET'}`;
        throughput.push(`| ${name} | ${concurrency} | ${qps.toFixed(1)} | ${p99(rounds.quarry).toFixed(1)} | ${sps.toFixed(1)} | ${p99(rounds.sphinx).toFixed(1)} | ${(qps / sps).toFixed(2)} | ${target} |`);
      }
      console.log(`${name}: done`);
    }

    const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
    console.log(`\nQuarry against Sphinx 2.2 (bm25 ranker), same machine, same PostgreSQL table (${CORPUS_ROWS.toLocaleString('en')} articles), limit ${LIMIT}, a new query per request`);
    console.log('\n| index | rows/s | seconds | index on disk MB | RSS after the run MB |');
    console.log('|---|---|---|---|---|');
    console.log(`| Quarry | ${Math.round(CORPUS_ROWS / quarrySync)} | ${quarrySync.toFixed(1)} | ${mb(quarryBytes)} | ${mb(rssOf(server.child.pid!))} |`);
    console.log(`| Sphinx | ${Math.round(sphinx.indexed.rows / sphinx.indexed.seconds)} | ${sphinx.indexed.seconds.toFixed(1)} | ${mb(sphinx.indexed.bytes)} | ${mb(sphinx.rssBytes())} |`);
    console.log(`\nLatency at concurrency 1, ${perSet} queries per set after ${WARMUP} warm-up, taking turns (ms)\n`);
    console.log('| set | Quarry p50 | Quarry p99 | Sphinx p50 | Sphinx p99 | Quarry / Sphinx p50 | target |');
    console.log('|---|---|---|---|---|---|---|');
    for (const line of latency) console.log(line);
    console.log(`\nThroughput, ${THROUGHPUT_REQUESTS} requests a round, median of ${ROUNDS} alternating rounds (searches/s; p99 ms over all rounds)\n`);
    console.log('| set | concurrency | Quarry /s | Quarry p99 | Sphinx /s | Sphinx p99 | Quarry / Sphinx | target |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const line of throughput) console.log(line);
  } finally {
    await sphinxHolder.stop?.();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
