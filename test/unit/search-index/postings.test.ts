/**
 * The postings of a version's rows (src/search-index/postings.ts) score as LanceDB's text index does: the same rows
 * for the same query, with the same scores to its 32-bit floats, on a real LanceDB table indexed with Quarry's
 * settings, over texts of every kind the index treats apart (empty, null, stop words only, words longer than it
 * keeps, a word repeated, capitals and punctuation, several tables). Words with accents are the one known difference:
 * see the last test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLance } from '../../../src/search-index/lance.js';
import { MAX_TOKEN_BYTES } from '../../../src/search-index/index-store.js';
import { queryStems } from '../../../src/search-index/analyzer.js';
import { buildPostings, TOP_ROWS, type TextPostings } from '../../../src/search-index/postings.js';
import { FEEDBACK_TEXT_CHARS, RowWordsBuilder } from '../../../src/search-index/row-words.js';

const WORDS = ['harbor', 'harbors', 'engine', 'engines', 'forest', 'market', 'copper', 'signal', 'meadow', 'valley', 'bridge', 'lantern', 'kettle', 'boiling', 'river'];
/** A text of 0 to 40 words, drawn so that lengths and counts vary (a seeded generator: the same rows every run). */
function texts(count: number): Array<string | null> {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, (_, i) => {
    if (i % 53 === 0) return null;
    if (i % 47 === 0) return '';
    if (i % 41 === 0) return 'the and of it is';
    const words = Array.from({ length: 1 + Math.floor(next() * 40) }, () => WORDS[Math.floor(next() * next() * WORDS.length)]!);
    if (i % 37 === 0) words.push('x'.repeat(MAX_TOKEN_BYTES + 5));
    if (i % 29 === 0) words.push('Harbor.', 'ENGINES,', 'don’t');
    return `${words.join(' ')} ${i}`;
  });
}

const ROWS = texts(1200);
const srcOf = (i: number) => (i % 3 === 0 ? 'itb_a' : 'itb_b');
let dir: string;
let table: import('@lancedb/lancedb').Table;
let postings: TextPostings;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-postings-'));
  const { lancedb, arrow } = await loadLance();
  const db = await lancedb.connect(dir);
  const schema = new arrow.Schema([new arrow.Field('id', new arrow.Int32(), false), new arrow.Field('src', new arrow.Utf8(), false), new arrow.Field('text', new arrow.Utf8(), true)]);
  table = await db.createTable('t', ROWS.map((text, i) => ({ id: i, src: srcOf(i), text })), { schema });
  await table.createIndex('text', { config: lancedb.Index.fts({ withPosition: false, maxTokenLength: MAX_TOKEN_BYTES }) });
  const builder = new RowWordsBuilder();
  for (const text of ROWS) builder.add(text);
  const rows = { rows: ROWS.length, value: (column: 'text' | 'src', place: number) => (column === 'text' ? ROWS[place]! : srcOf(place)) };
  postings = (await buildPostings(builder.finish(), rows, MAX_TOKEN_BYTES))!;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** LanceDB's ranking of the query, as ids and scores. */
async function indexRanking(words: string, limit: number, srcs: string[] | null = null) {
  let query = table.query().fullTextSearch(words, { columns: 'text' });
  if (srcs) query = query.where(`src IN (${srcs.map((s) => `'${s}'`).join(', ')})`);
  return (await query.select(['id', '_score']).limit(limit).toArray()).map((r) => ({ id: Number(r.id), score: Number(r._score) }));
}

function postingsRanking(words: string, limit: number, srcs: string[] | null = null) {
  const ranked = postings.rank([...queryStems(words)], limit, srcs);
  return [...ranked.places].map((place, i) => ({ id: place, score: ranked.scores[i]! }));
}

/** Rank by rank the same scores, and the same rows above the last score (rows of equal score may come in any order). */
function expectSameRanking(found: Array<{ id: number; score: number }>, expected: Array<{ id: number; score: number }>, label: string) {
  expect(found.length, label).toBe(expected.length);
  found.forEach((hit, i) => expect(Math.abs(hit.score - expected[i]!.score), `${label} #${i}`).toBeLessThan(1e-5 * Math.max(1, hit.score)));
  const last = expected.at(-1)?.score ?? 0;
  const above = (hits: Array<{ id: number; score: number }>) => hits.filter((h) => h.score > last + 1e-5 * Math.max(1, last)).map((h) => h.id).sort((a, b) => a - b);
  expect(above(found), label).toEqual(above(expected));
}

describe('TextPostings', () => {
  it('when a query is ranked, then the rows and scores are LanceDB\'s, for one word, several, a repeated one and every match', async () => {
    for (const [words, limit] of [['harbor', 10], ['river', 1000], ['engines copper', 25], ['lantern lantern kettle', 40], ['Harbors meadow valley bridge signal', 101], ['engine', 5000]] as const) {
      const expected = await indexRanking(words, limit);
      expect(expected.length, words).toBeGreaterThan(0);
      expectSameRanking(postingsRanking(words, limit), expected, words);
    }
  });

  it('when a search selects some tables, then only their rows rank, with the scores of the whole space', async () => {
    for (const srcs of [['itb_a'], ['itb_b'], ['itb_a', 'itb_b'], ['itb_missing']]) {
      const expected = await indexRanking('forest market', 60, srcs);
      expectSameRanking(postingsRanking('forest market', 60, srcs), expected, srcs.join());
    }
  });

  it('when one word held by more rows than its top list is ranked, then its best rows are LanceDB\'s, for any page the list covers', async () => {
    const holding = (await indexRanking('harbor', ROWS.length)).length;
    expect(holding).toBeGreaterThan(TOP_ROWS);
    for (const limit of [1, 10, 101, TOP_ROWS, TOP_ROWS + 1, 600]) {
      expectSameRanking(postingsRanking('harbor', limit), await indexRanking('harbor', limit), `harbor ${limit}`);
    }
  });

  it('when one word is ranked over some tables, then only their rows come, from the top list or, when it holds too few of them, from every row', async () => {
    for (const [srcs, limit] of [[['itb_b'], 60], [['itb_a'], 60], [['itb_a'], 200], [['itb_missing'], 10]] as const) {
      const expected = await indexRanking('harbor', limit, [...srcs]);
      expectSameRanking(postingsRanking('harbor', limit, [...srcs]), expected, `${srcs.join()} ${limit}`);
    }
  });

  it('when rows are passed over (changed since the version), then one word\'s best rows are the next ones, as when every row is scored', () => {
    const stems = [...queryStems('harbor')];
    const all = postings.rank(stems, 40);
    const skip = new Uint8Array(ROWS.length);
    for (const i of [0, 3, 17]) skip[all.places[i]!] = 1;
    const kept = postings.rank(stems, 37, null, skip);
    const expected = [...all.places].filter((place) => !skip[place]);
    expect([...kept.scores]).toEqual([...all.scores].filter((_, i) => !skip[all.places[i]!]));
    // Rows of equal score may come in any order: the same rows above the last score.
    const last = kept.scores.at(-1)!;
    const above = (places: number[], scores: number[]) => places.filter((_, i) => scores[i]! > last).sort((a, b) => a - b);
    expect(above([...kept.places], [...kept.scores])).toEqual(above(expected, [...all.scores].filter((_, i) => !skip[all.places[i]!])));
  });

  it('when a ranked row\'s table is asked for, then it is the row\'s own src', () => {
    for (let place = 0; place < ROWS.length; place++) expect(postings.srcAt(place)).toBe(srcOf(place));
  });

  it('when a query holds no word the rows hold, or only stop words and over-long words, then nothing ranks', () => {
    expect(postingsRanking('zyzzyva', 10)).toEqual([]);
    expect(postingsRanking('the of and', 10)).toEqual([]);
    expect(postingsRanking('x'.repeat(MAX_TOKEN_BYTES + 5), 10)).toEqual([]);
    expect(postingsRanking('harbor', 0)).toEqual([]);
  });

  it('when a row\'s text is longer than the part whose words are counted, then no postings are built: its scores could not be the index\'s', async () => {
    const builder = new RowWordsBuilder();
    const long = ['harbor '.repeat(Math.ceil(FEEDBACK_TEXT_CHARS / 7) + 10), 'harbor river'];
    for (const text of long) builder.add(text);
    expect(await buildPostings(builder.finish(), { rows: 2, value: (column, place) => (column === 'text' ? long[place]! : 'itb_a') }, MAX_TOKEN_BYTES)).toBeNull();
  });

  it('when a word has accents, then it matches its folded stem, as Quarry\'s analyzer reads it (LanceDB 0.31 stems such a word before folding it)', async () => {
    const accented = ['Éngines harbor', 'engines river', 'café latte', 'cafe'];
    const builder = new RowWordsBuilder();
    for (const text of accented) builder.add(text);
    const held = (await buildPostings(builder.finish(), { rows: accented.length, value: (column, place) => (column === 'text' ? accented[place]! : 'itb_a') }, MAX_TOKEN_BYTES))!;
    const found = (words: string) => [...held.rank([...queryStems(words)], 10).places].sort();
    expect(found('engines')).toEqual([0, 1]);
    expect(found('éngine')).toEqual([0, 1]);
    expect(found('cafe')).toEqual([2, 3]);
  });

  it('holds its rows in typed arrays whose size it reports', () => {
    expect(postings.documents).toBe(ROWS.filter((t) => t !== null).length);
    expect(postings.bytes).toBeGreaterThan(ROWS.length * 4);
  });
});
