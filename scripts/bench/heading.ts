/**
 * How a row's heading should count in the ranking, measured on LanceDB directly (no server): the evidence behind
 * HEADING_BOOST and the two-query design of IndexSpace.searchText (src/search-index/index-store.ts).
 *
 * Variants, each over the same rows (text = title + body, head = title, text2 = title twice + body):
 * - text: BM25 over the text alone (what the index did before headings);
 * - boolean: one BooleanQuery, the text a "must" clause and the heading a "should" clause boosted by 0.5;
 * - two queries: the text and the heading as two match queries side by side, the heading's score x 0.5 added to the
 *   text's in JavaScript (what Quarry does);
 * - repeated title: BM25 over text2, the title written twice (no second query).
 * Relevance: nDCG@10 and MAP on Cranfield (../shared/bench/relevance). Speed: p50/p90 of verbose 8-word any-word
 * queries (a new one per request, limit 1101 as the index search asks) on the 100,000-article standard corpus.
 *
 *   npx tsx scripts/bench/heading.ts [queries per variant, default 100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEADING_BOOST, MAX_TOKEN_BYTES } from '../../src/search-index/index-store.js';
import { loadLance } from '../../src/search-index/lance.js';
import { articles, ensureCorpus, verboseQueries } from './lib/bench-corpus.js';
import { loadCranfield, measure } from './lib/cranfield.js';

const perVariant = Number(process.argv[2] ?? 100);
const DEPTH = 1101;
const { lancedb, arrow } = await loadLance();
type Table = Awaited<ReturnType<Awaited<ReturnType<typeof lancedb.connect>>['createEmptyTable']>>;
type Doc = { id: number; title: string; body: string };
type Ranked = Array<{ id: number; score: number }>;

/** Only letters and digits reach the engine, as in Quarry. */
const words = (text: string) => text.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
const anyWord = (query: string, column: string, boost = 1) => new lancedb.MatchQuery(query, column, { operator: lancedb.Operator.Or, boost });

async function build(docs: Doc[]): Promise<{ table: Table; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-heading-'));
  const text = (name: string) => new arrow.Field(name, new arrow.Utf8(), true);
  const schema = new arrow.Schema([new arrow.Field('id', new arrow.Float64(), false), text('text'), text('head'), text('text2')]);
  const table = await (await lancedb.connect(dir)).createEmptyTable('rows', schema);
  for (let i = 0; i < docs.length; i += 5000) {
    await table.add(docs.slice(i, i + 5000).map((d) => ({ id: d.id, text: `${d.title}\n${d.body}`, head: d.title, text2: `${d.title}\n${d.title}\n${d.body}` })));
  }
  for (const column of ['text', 'head', 'text2']) {
    await table.createIndex(column, { config: lancedb.Index.fts({ withPosition: false, maxTokenLength: MAX_TOKEN_BYTES }) });
  }
  return { table, dir };
}

async function ranked(table: Table, search: import('@lancedb/lancedb').FullTextQuery): Promise<Ranked> {
  const rows = await table.query().fullTextSearch(search).select(['id', '_score']).limit(DEPTH).toArray();
  return rows.map((row: { id: number; _score: number }) => ({ id: Number(row.id), score: Number(row._score) }));
}

const variants: Record<string, (table: Table, query: string) => Promise<Ranked>> = {
  'text': (table, query) => ranked(table, anyWord(query, 'text')),
  'boolean': (table, query) => ranked(table, new lancedb.BooleanQuery([
    [lancedb.Occur.Must, anyWord(query, 'text')],
    [lancedb.Occur.Should, anyWord(query, 'head', HEADING_BOOST)],
  ])),
  'two queries': async (table, query) => {
    const [text, head] = await Promise.all([ranked(table, anyWord(query, 'text')), ranked(table, anyWord(query, 'head'))]);
    const headScores = new Map(head.map((hit) => [hit.id, hit.score]));
    return text.map((hit) => ({ id: hit.id, score: hit.score + HEADING_BOOST * (headScores.get(hit.id) ?? 0) })).sort((a, b) => b.score - a.score);
  },
  'repeated title': (table, query) => ranked(table, anyWord(query, 'text2')),
};

const cranfield = loadCranfield();
const small = await build(cranfield.docs);
const relevance = new Map<string, { ndcg10: number; map: number }>();
for (const [name, run] of Object.entries(variants)) {
  const rankings = new Map<number, number[]>();
  for (const query of cranfield.queries) rankings.set(query.n, (await run(small.table, words(query.text))).slice(0, 100).map((hit) => hit.id));
  relevance.set(name, measure(cranfield, rankings));
}
rmSync(small.dir, { recursive: true, force: true });

ensureCorpus();
const rows = articles();
const big = await build(rows.map(([title, body], i) => ({ id: i + 1, title, body })));
const names = Object.keys(variants);
const queries = verboseQueries(rows, perVariant * names.length).map(words);
const times = new Map<string, number[]>(names.map((name) => [name, []]));
// The variants take turns query by query, so the machine's drift falls on all of them alike.
for (let i = 0; i < perVariant; i++) {
  for (const [k, name] of names.entries()) {
    const started = performance.now();
    await variants[name]!(big.table, queries[i * names.length + k]!);
    times.get(name)!.push(performance.now() - started);
  }
}
rmSync(big.dir, { recursive: true, force: true });

const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const base = at([...times.get('text')!].sort((a, b) => a - b), 0.5);
console.log(`Heading weight ${HEADING_BOOST}; Cranfield (${cranfield.queries.length} queries); ${perVariant} queries per variant on ${rows.length} rows\n`);
console.log('| variant | nDCG@10 | MAP | p50 ms | p90 ms | p50 / text |');
console.log('|---|---|---|---|---|---|');
for (const name of names) {
  const sorted = [...times.get(name)!].sort((a, b) => a - b);
  const { ndcg10, map } = relevance.get(name)!;
  console.log(`| ${name} | ${ndcg10.toFixed(4)} | ${map.toFixed(4)} | ${at(sorted, 0.5).toFixed(1)} | ${at(sorted, 0.9).toFixed(1)} | ${(at(sorted, 0.5) / base).toFixed(2)} |`);
}
