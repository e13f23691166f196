/**
 * The ranking methods measured on Quarry's index code directly (IndexStore and searchIndex, no server): the
 * evidence behind pseudo-relevance feedback (src/search-index/feedback.ts) and the agreement-weighted hybrid fusion
 * (src/search-index/fusion.ts), quicker to run than bench:relevance.
 *
 * 1. Relevance: Cranfield (../shared/bench/relevance) as one table (title, body; the title is the heading), every
 *    query through searchIndex (limit 100, typo tolerance on) in natural and hybrid mode without RM3 feedback, with
 *    it on the rows ranked (the default of the API, `rerank`) and over the index (`queryExpansion`), and in semantic
 *    mode (the local embedding model, semanticRatio 0.25), scored on each half of the queries (odd and even query
 *    numbers) against the plain BM25 reference on the same half.
 * 2. Cost: verbose 8-word natural queries (a new one per request, limit 20) over the 100,000-article corpus, the
 *    three natural variants taking turns query by query; p50/p90 of searchIndex, the index queries each asks, and
 *    the time the feedback on the rows ranked holds the event loop (its `rerank` stage).
 *
 *   npx tsx scripts/bench/ranking.ts [queries per variant, default 200] [--no-corpus]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEmbeddingProvider } from '../../src/embeddings/index.js';
import { indexTextQuery } from '../../src/search-index/analyzer.js';
import { MAX_EMBED_CHARS } from '../../src/search-index/documents.js';
import { RM3 } from '../../src/search-index/feedback.js';
import { searchIndex, type IndexedSource, type IndexSearchInput } from '../../src/search-index/index-search.js';
import { IndexStore, type IndexRow, type IndexSpace } from '../../src/search-index/index-store.js';
import { compileQuery } from '../../src/search-core/query.js';
import { articles, ensureCorpus, verboseQueries } from './lib/bench-corpus.js';
import { bm25Reference, HALVES, loadCranfield, measure, type Half } from './lib/cranfield.js';
import { percentile } from './lib/stats.js';
import { StageTimer } from '../../src/lib/stage-timer.js';

const perVariant = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200);
const withCorpus = !process.argv.includes('--no-corpus');
const SPACE = 'space_bench_test';
const sources: IndexedSource[] = [{ src: 'bench', connectionId: 'c', tableName: 'docs', keyColumns: ['id'], textColumns: ['title', 'body'], semanticReady: true }];

/** A store whose spaces count the index queries a search asks (a text search is its text and heading queries). */
function counted(store: IndexStore): { store: Pick<IndexStore, 'space'>; calls: { text: number; texts: number; vector: number } } {
  const calls = { text: 0, texts: 0, vector: 0 };
  return {
    calls,
    store: {
      space: async (name: string) => {
        const space = await store.space(name);
        if (!space) return null;
        return new Proxy(space, {
          get(target, key: keyof IndexSpace) {
            const value = target[key];
            if (typeof value !== 'function') return value;
            if (key === 'searchText' || key === 'texts' || key === 'searchVector') calls[key === 'searchText' ? 'text' : key === 'texts' ? 'texts' : 'vector'] += 1;
            return (value as (...args: unknown[]) => unknown).bind(target);
          },
        });
      },
    },
  };
}

async function build(rows: Array<{ id: number; title: string; body: string; vector?: number[] }>): Promise<{ store: IndexStore; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-ranking-'));
  const store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
  const space = await store.ensureSpace(SPACE);
  if (rows[0]?.vector) await space.ensureVectorColumn(rows[0].vector.length);
  for (let i = 0; i < rows.length; i += 5000) {
    await space.append(rows.slice(i, i + 5000).map((d): IndexRow => ({
      rid: `r${d.id}`, src: 'bench', pk: JSON.stringify({ id: d.id }), hash: 'h', thash: 't', text: `${d.title}\n${d.body}`, head: d.title, fields: '{}',
      ...(d.vector ? { vector: d.vector, vmodel: 'local' } : {}),
    })));
  }
  await space.optimize();
  // Typo tolerance reads the space's words from memory once they are built, as a server does after its first search.
  await space.vocabulary();
  await space.vocabularyBuilt();
  return { store, dir };
}

const baseInput = (query: string, changes: Partial<IndexSearchInput>): IndexSearchInput => ({
  space: SPACE, sources, mode: 'natural', text: indexTextQuery(compileQuery(query, 'natural').query), vector: null, window: 100,
  wholeSpace: true, semanticRatio: 0.25, typoTolerance: true, ...changes,
});

const f = (x: number) => x.toFixed(4);
const cranfield = loadCranfield();
const reference = bm25Reference(cranfield);
const halves = Object.keys(HALVES) as Half[];

console.log(`Embedding Cranfield's ${cranfield.docs.length} documents and ${cranfield.queries.length} queries with the local model...`);
const provider = new LocalEmbeddingProvider();
const docVectors: Float32Array[] = [];
for (let i = 0; i < cranfield.docs.length; i += 64) {
  docVectors.push(...await provider.embed(cranfield.docs.slice(i, i + 64).map((d) => `${d.title}\n${d.body}`.slice(0, MAX_EMBED_CHARS))));
}
const queryVectors = new Map<number, Float32Array>();
for (const query of cranfield.queries) queryVectors.set(query.n, (await provider.embed([query.text], 'query'))[0]!);
await provider.close();

const small = await build(cranfield.docs.map((d, i) => ({ ...d, vector: Array.from(docVectors[i]!) })));
const runs: Array<[string, Partial<IndexSearchInput>]> = [
  ['natural, no feedback', {}],
  ['natural, RM3 on the rows ranked (default)', { rerank: RM3 }],
  ['natural, RM3 over the index (queryExpansion)', { feedback: RM3 }],
  ['semantic', { mode: 'semantic' }],
  ['hybrid, no feedback', { mode: 'hybrid' }],
  ['hybrid, RM3 on the rows ranked (default)', { mode: 'hybrid', rerank: RM3 }],
  ['hybrid, RM3 over the index (queryExpansion)', { mode: 'hybrid', feedback: RM3 }],
];
console.log(`\nCranfield, limit 100, typo tolerance on; reference: plain BM25 (scripts/bench/lib/cranfield.ts); halves ${halves.map((h) => `${h} ${cranfield.queries.filter(HALVES[h]).length}`).join(', ')}\n`);
console.log(`| run | ${halves.map((h) => `${h} nDCG@10 | ${h} x ref | ${h} MAP | ${h} R@100`).join(' | ')} | all nDCG@10 | all x ref | p50 ms |`);
console.log(`|---|${halves.map(() => '---|---|---|---|').join('')}---|---|---|`);
const row = (name: string, rankings: Map<number, number[]>, p50: string) => {
  const cells = halves.map((h) => {
    const m = measure(cranfield, rankings, h);
    return `${f(m.ndcg10)} | ${(m.ndcg10 / measure(cranfield, reference, h).ndcg10).toFixed(3)} | ${f(m.map)} | ${f(m.recall100)}`;
  });
  const all = measure(cranfield, rankings).ndcg10;
  console.log(`| ${name} | ${cells.join(' | ')} | ${f(all)} | ${(all / measure(cranfield, reference).ndcg10).toFixed(3)} | ${p50} |`);
};
row('reference (plain BM25)', reference, '');
for (const [name, changes] of runs) {
  const rankings = new Map<number, number[]>();
  const times: number[] = [];
  for (const query of cranfield.queries) {
    const started = performance.now();
    const result = await searchIndex(small.store, baseInput(query.text, { ...changes, vector: changes.mode ? queryVectors.get(query.n)! : null }));
    times.push(performance.now() - started);
    rankings.set(query.n, result.hits.map((hit) => Number(hit.rid.slice(1))));
  }
  row(name, rankings, percentile(times.sort((a, b) => a - b), 0.5).toFixed(1));
}
await small.store.close();
rmSync(small.dir, { recursive: true, force: true });

if (withCorpus) {
  ensureCorpus();
  const rows = articles();
  const started = Date.now();
  const big = await build(rows.map(([title, body], i) => ({ id: i + 1, title, body })));
  console.log(`\n${rows.length.toLocaleString('en')} articles indexed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const probe = counted(big.store);
  const variants: Array<[string, Partial<IndexSearchInput>]> = [['natural', {}], ['natural, RM3 on the rows ranked', { rerank: RM3 }], ['natural, RM3 over the index', { feedback: RM3 }]];
  const queries = verboseQueries(rows, perVariant * variants.length + 20);
  // Warm up: the first searches open the table and load its indexes.
  for (const query of queries.slice(-20)) await searchIndex(probe.store, baseInput(query, { window: 20 }));
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  const asked = new Map<string, { text: number; texts: number }>(variants.map(([name]) => [name, { text: 0, texts: 0 }]));
  // The feedback on the rows ranked is work in Quarry's own thread: how long each search spends in it (its stage).
  const reranking: number[] = [];
  for (let i = 0; i < perVariant; i++) {
    for (const [k, [name, changes]] of variants.entries()) {
      const before = { ...probe.calls };
      const timer = new StageTimer();
      const t0 = performance.now();
      await searchIndex(probe.store, baseInput(queries[i * variants.length + k]!, { window: 20, timer, ...changes }));
      times.get(name)!.push(performance.now() - t0);
      const stage = /rerank;dur=([\d.]+)/.exec(timer.header());
      if (stage) reranking.push(Number(stage[1]));
      asked.get(name)!.text += probe.calls.text - before.text;
      asked.get(name)!.texts += probe.calls.texts - before.texts;
    }
  }
  await big.store.close();
  rmSync(big.dir, { recursive: true, force: true });
  const base = percentile([...times.get('natural')!].sort((a, b) => a - b), 0.5);
  console.log(`\nVerbose 8-word natural queries, limit 20, ${perVariant} per variant, taking turns\n`);
  console.log('| variant | p50 ms | p90 ms | p50 - natural ms | text searches per query (each a text and a heading query) | row-text reads per query |');
  console.log('|---|---|---|---|---|---|');
  for (const [name] of variants) {
    const sorted = [...times.get(name)!].sort((a, b) => a - b);
    const p50 = percentile(sorted, 0.5);
    console.log(`| ${name} | ${p50.toFixed(1)} | ${percentile(sorted, 0.9).toFixed(1)} | ${(p50 - base).toFixed(1)} | ${(asked.get(name)!.text / perVariant).toFixed(2)} | ${(asked.get(name)!.texts / perVariant).toFixed(2)} |`);
  }
  reranking.sort((a, b) => a - b);
  console.log(`\nRM3 on the rows ranked, Quarry's own work per search (stage \`rerank\`, the event loop held): p50 ${percentile(reranking, 0.5).toFixed(2)} ms, p90 ${percentile(reranking, 0.9).toFixed(2)}, p99 ${percentile(reranking, 0.99).toFixed(2)}, max ${reranking[reranking.length - 1]!.toFixed(2)} (${reranking.length} searches)`);
}
