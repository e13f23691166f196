/**
 * searchIndex and hitDetails over a stand-in space: which tables each ranking reads, how the window, the count cap and
 * the per-database counts are cut, and how hybrid fuses and counts both rankings.
 */
import { describe, expect, it } from 'vitest';
import type { IndexHit, IndexSpace, IndexStore, SearchScope, TextQuery } from '../../../src/search-index/index-store.js';
import { VersionRowsBuilder, type Utf8Data } from '../../../src/search-index/row-cache.js';
import { COUNT_CAP, HEADING_DEPTH, hitDetails, HYBRID_DEPTH, MIN_SIMILARITY, RANK_DEPTH, searchIndex, type IndexedSource, type IndexSearchInput } from '../../../src/search-index/index-search.js';
import { queryStems } from '../../../src/search-index/analyzer.js';
import { HeadingScorer } from '../../../src/search-index/heading.js';
import { VocabularyBuilder, type SpaceVocabulary } from '../../../src/search-index/vocabulary.js';

const sources: IndexedSource[] = [
  { src: 'itb_a', connectionId: 'db_1', tableName: 'docs', keyColumns: ['id'], textColumns: ['title', 'body'], semanticReady: true },
  { src: 'itb_b', connectionId: 'db_2', tableName: 'notes', keyColumns: ['id'], textColumns: ['note'], semanticReady: false },
];
const hits = (n: number, src = 'itb_a', prefix = 'r') => Array.from({ length: n }, (_, i): IndexHit => ({ rid: `${prefix}${i}`, src, score: n - i }));

/** A space that answers with fixed rankings and records what it was asked. */
function fakeStore(text: IndexHit[], vector: IndexHit[], stored: Array<{ rid: string; src: string; pk: string; fields: string }> = [], vocabulary: SpaceVocabulary | null = null, onObjectStore = false, textOf: Map<string, string> | null = null) {
  const calls: Array<{ kind: string; srcs: string[]; limit: number; minSimilarity?: number; query?: TextQuery }> = [];
  const space = {
    onObjectStore,
    rowsInMemory: async () => false,
    searchText: async (query: TextQuery, scope: SearchScope, limit: number) => {
      const srcs = scope.srcs ?? sources.map((s) => s.src);
      calls.push({ kind: 'text', srcs, limit, query });
      return text.filter((h) => srcs.includes(h.src)).slice(0, limit);
    },
    searchVector: async (_vector: Float32Array, scope: SearchScope, limit: number, minSimilarity: number) => {
      const srcs = scope.srcs ?? sources.map((s) => s.src);
      calls.push({ kind: 'vector', srcs, limit, minSimilarity });
      return vector.filter((h) => srcs.includes(h.src)).slice(0, limit);
    },
    rows: async (rids: string[]) => stored.filter((row) => rids.includes(row.rid)),
    searchVocabulary: async () => (vocabulary ? { vocabulary, current: true } : null),
    texts: async (rids: string[]) => new Map(rids.map((rid) => [rid, textOf?.get(rid) ?? `kettle descaling ${rid}`])),
  } as unknown as IndexSpace;
  let opened = 0;
  const store: Pick<IndexStore, 'space'> = { space: async () => { opened += 1; return space; } };
  return { store, calls, opened: () => opened };
}

const input = (changes: Partial<IndexSearchInput>): IndexSearchInput => ({
  space: 'space_usr_1_test', sources, mode: 'natural', text: { words: 'kettle', exclude: [] }, vector: null, window: 20, semanticRatio: 0.25, wholeSpace: false, ...changes,
});

describe('searchIndex', () => {
  it.each(['natural', 'semantic'] as const)('when the engine returns rows of equal score in any order (%s), then they rank by id, the same on every page', async (mode) => {
    const tied: IndexHit[] = ['r3', 'r1', 'r9', 'r2'].map((rid) => ({ rid, src: 'itb_a', score: 1 }));
    const best: IndexHit = { rid: 'r7', src: 'itb_a', score: 2 };
    const { store } = fakeStore([...tied, best], [...tied, best]);
    const vector = mode === 'semantic' ? new Float32Array([1, 0]) : null;
    const result = await searchIndex(store, input({ mode, vector, window: 5 }));
    expect(result.hits.map((h) => h.rid)).toEqual(['r7', 'r1', 'r2', 'r3', 'r9']);
  });

  it('when a natural search runs, then every selected table is ranked by text and the page is cut to the window', async () => {
    const { store, calls } = fakeStore([...hits(3), ...hits(2, 'itb_b', 'n')].sort((a, b) => b.score - a.score), []);
    const result = await searchIndex(store, input({ window: 4, text: { words: 'kettle', exclude: ['tea'] } }));
    expect(calls).toEqual([{ kind: 'text', srcs: ['itb_a', 'itb_b'], limit: RANK_DEPTH + 1, query: { words: 'kettle', exclude: ['tea'], headings: true, headingDepth: HEADING_DEPTH, withRows: true } }]);
    expect(result.hits).toHaveLength(4);
    expect(result).toMatchObject({ total: 5, totalIsEstimate: false });
    expect(result.matchesByConnection).toEqual(new Map([['db_1', 3], ['db_2', 2]]));
  });

  it('when the space is on an object store, then the ranking brings back no stored fields (a request per row there): only the page\'s rows are read', async () => {
    const { store, calls } = fakeStore(hits(30), [], [], null, true);
    const result = await searchIndex(store, input({ window: 10 }));
    expect(calls.map((c) => c.query?.withRows)).toEqual([false]);
    expect(result.hits).toHaveLength(10);
  });

  it('when an exact total is asked and more rows match than the count cap, then the total is the cap and says it is an estimate', async () => {
    const { store, calls } = fakeStore(hits(COUNT_CAP + 50), []);
    const result = await searchIndex(store, input({ window: 10, exactTotal: true }));
    expect(calls.map((c) => c.limit)).toEqual([COUNT_CAP + 1]);
    expect(result).toMatchObject({ total: COUNT_CAP, totalIsEstimate: true });
    expect(result.matchesByConnection.get('db_1')).toBe(COUNT_CAP);
    const exact = await searchIndex(fakeStore(hits(COUNT_CAP), []).store, input({ window: 10, exactTotal: true }));
    expect(exact).toMatchObject({ total: COUNT_CAP, totalIsEstimate: false });
  });

  it('when no exact total is asked, then the engine ranks only the page\'s depth and a total beyond it is a lower bound that says so', async () => {
    const many = fakeStore(hits(COUNT_CAP + 50), []);
    const result = await searchIndex(many.store, input({ window: 10 }));
    expect(many.calls.map((c) => c.limit)).toEqual([RANK_DEPTH + 1]);
    expect(result).toMatchObject({ total: RANK_DEPTH, totalIsEstimate: true });
    expect(result.hits.map((h) => h.rid)).toEqual(hits(10).map((h) => h.rid));
    const deep = fakeStore(hits(COUNT_CAP + 50), []);
    expect(await searchIndex(deep.store, input({ window: 300 }))).toMatchObject({ total: 300, totalIsEstimate: true });
    expect(deep.calls.map((c) => c.limit)).toEqual([301]);
    const few = await searchIndex(fakeStore(hits(RANK_DEPTH), []).store, input({ window: 10 }));
    expect(few).toMatchObject({ total: RANK_DEPTH, totalIsEstimate: false });
  });

  it('when the space\'s words are in memory, then one query ranks with the headings weighed from them, brings the page\'s rows, and the total beyond the page is estimated from the rows holding each word', async () => {
    const builder = new VocabularyBuilder(40);
    for (let i = 0; i < 300; i++) builder.add('itb_a', `kettle number ${i}`, 'Kettle');
    for (let i = 0; i < 50; i++) builder.add('itb_b', `kettles and teapots ${i}`);
    for (let i = 0; i < 25; i++) builder.add('itb_b', `teapot ${i}`);
    const many = fakeStore(hits(COUNT_CAP + 50), [], [], await builder.finish());
    const result = await searchIndex(many.store, input({ window: 10 }));
    expect(many.calls).toHaveLength(1);
    expect(many.calls[0]!.query).toMatchObject({ words: 'kettle', headings: true, withRows: true });
    expect(many.calls[0]!.query!.headingScorer).toBeInstanceOf(HeadingScorer);
    // db_1 holds "kettle" in 300 rows (100 were ranked), db_2 in 50 (none ranked): an estimate, flagged.
    expect(result).toMatchObject({ total: 350, totalIsEstimate: true });
    expect(result.matchesByConnection).toEqual(new Map([['db_1', 300], ['db_2', 50]]));
    // A filter selects rows the word counts cannot tell apart: the total stays the rows seen.
    const filtered = fakeStore(hits(COUNT_CAP + 50), [], [], await builder.finish());
    expect(await searchIndex(filtered.store, input({ window: 10, where: 'f_price > 1' }))).toMatchObject({ total: RANK_DEPTH, totalIsEstimate: true });
  });

  it('when a search sorts, counts facets or weighs databases, then it works over matches counted up to the cap, as with an exact total', async () => {
    const column = { name: 'price', physical: ['f_price'], kind: 'number' as const };
    for (const changes of [{ sort: [{ column, descending: false }] }, { facets: [column] }, { weights: new Map([['db_1', 2]]) }]) {
      const { store, calls } = fakeStore(hits(COUNT_CAP + 50), []);
      const result = await searchIndex(store, input({ window: 10, ...changes }));
      expect(calls.map((c) => c.limit)).toEqual([COUNT_CAP + 1]);
      expect(result).toMatchObject({ total: COUNT_CAP, totalIsEstimate: true });
    }
  });

  it('when a hybrid search asks no exact total, then its text ranking still reads and counts up to the cap: the fusion needs the text\'s deeper rows', async () => {
    const { store, calls } = fakeStore(hits(COUNT_CAP + 50), hits(5, 'itb_a', 'v'));
    const result = await searchIndex(store, input({ mode: 'hybrid', window: 10, vector: Float32Array.from([1, 0]), semanticRatio: 0.5 }));
    expect(calls.map((c) => `${c.kind}:${c.limit}`).sort()).toEqual([`text:${COUNT_CAP + 1}`, `vector:${HYBRID_DEPTH}`]);
    expect(result).toMatchObject({ total: COUNT_CAP, totalIsEstimate: true });
  });

  it('when a semantic search runs, then only tables with vectors are compared, at the minimum similarity', async () => {
    const { store, calls } = fakeStore([], [...hits(2), ...hits(2, 'itb_b', 'n')]);
    const result = await searchIndex(store, input({ mode: 'semantic', vector: Float32Array.from([1, 0]) }));
    expect(calls).toEqual([{ kind: 'vector', srcs: ['itb_a'], limit: COUNT_CAP + 1, minSimilarity: MIN_SIMILARITY }]);
    expect(result.hits.map((h) => h.rid)).toEqual(['r0', 'r1']);
    expect(await searchIndex(store, input({ mode: 'semantic', vector: null }))).toMatchObject({ hits: [], total: 0 });
  });

  it('when a hybrid search runs, then both rankings are fused and every row either found counts once', async () => {
    const text = [{ rid: 'a', src: 'itb_a', score: 8 }, { rid: 'b', src: 'itb_b', score: 4 }];
    const vector = [{ rid: 'c', src: 'itb_a', score: 0.9 }, { rid: 'a', src: 'itb_a', score: 0.5 }];
    const { store, calls } = fakeStore(text, vector);
    const result = await searchIndex(store, input({ mode: 'hybrid', vector: Float32Array.from([1, 0]), semanticRatio: 0.5 }));
    expect(calls.map((c) => `${c.kind}:${c.srcs.join(',')}`).sort()).toEqual(['text:itb_a,itb_b', 'vector:itb_a']);
    // The two first pages share one row of two: meaning weighs 0.5 x 0.5 (fusion.ts, agreementFusion); similarity
    // counts from MIN_SIMILARITY, BM25 from 0, so the last row keeps its share of the text's weight.
    const scored = result.hits.map((h) => [h.rid, Number(h.score.toFixed(6))]);
    expect(scored).toEqual([['a', Number((0.75 + 0.25 * ((0.5 - MIN_SIMILARITY) / (0.9 - MIN_SIMILARITY))).toFixed(6))], ['b', 0.375], ['c', 0.25]]);
    expect(result).toMatchObject({ total: 3, totalIsEstimate: false });
    expect(result.matchesByConnection).toEqual(new Map([['db_1', 2], ['db_2', 1]]));
  });

  it('when a hybrid search\'s meaning ranking shares no row with the text\'s first page, then the page is the text ranking (a weak model cannot pull it down)', async () => {
    const text = hits(12);
    const vector = hits(12, 'itb_a', 'v').map((h) => ({ ...h, score: h.score / 12 }));
    const { store } = fakeStore(text, vector);
    const result = await searchIndex(store, input({ mode: 'hybrid', window: 10, vector: Float32Array.from([1, 0]), semanticRatio: 0.25 }));
    expect(result.hits.map((h) => h.rid)).toEqual(text.slice(0, 10).map((h) => h.rid));
  });

  it('when query expansion is asked (RM3), then the text ranking runs again with the words of its best rows, and the page fuses both', async () => {
    const { store, calls } = fakeStore(hits(3), []);
    const result = await searchIndex(store, input({ window: 3, feedback: { docs: 2, terms: 2, originalWeight: 0.5 } }));
    expect(calls.map((c) => c.query?.words)).toEqual(['kettle', 'descaling kettle']);
    expect(calls[1]!.query!.headings).toBe(false);
    // The second ranking is the fake's same three rows: every row scores 0.5 x first + (0.5 x 1 / 2) x second.
    expect(result.hits.map((h) => [h.rid, h.score])).toEqual([['r0', 2.25], ['r1', 1.5], ['r2', 0.75]]);
  });

  it('when relevance feedback is on, then the rows ranked for the page bring their words (or text), are scored again without a second text query, and a row of the best rows\' words climbs', async () => {
    const builder = new VocabularyBuilder(40);
    for (const text of ['kettle descaling vinegar', 'vinegar descaling', 'kettle', 'bread', 'paint', 'tea']) builder.add('itb_a', text);
    const vocabulary = await builder.finish();
    const text: IndexHit[] = [
      { rid: 'r0', src: 'itb_a', score: 3, text: 'kettle descaling vinegar' },
      { rid: 'r1', src: 'itb_a', score: 1, text: 'kettle' },
      { rid: 'r2', src: 'itb_a', score: 0.9, text: 'vinegar descaling kettle' },
    ];
    const { store, calls } = fakeStore(text, [], [], vocabulary);
    const result = await searchIndex(store, input({ window: 3, rerank: { docs: 1, terms: 3, originalWeight: 0.5 } }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.query).toMatchObject({ words: 'kettle', withRows: true, withWords: true });
    expect(result.hits.map((h) => h.rid)).toEqual(['r0', 'r2', 'r1']);
    expect(result.hits.every((h) => h.text === undefined && h.words === undefined)).toBe(true);
    const off = await searchIndex(fakeStore(text, [], [], vocabulary).store, input({ window: 3 }));
    expect(off.hits.map((h) => h.rid)).toEqual(['r0', 'r1', 'r2']);
  });

  it('when relevance feedback is on in a hybrid search, then its model comes from the fused ranking\'s best rows, not the text ranking\'s, and the text\'s rows holding the fused best row\'s words climb', async () => {
    const builder = new VocabularyBuilder(40);
    const textOf = new Map([['r0', 'kettle bread'], ['r1', 'kettle vinegar'], ['r2', 'kettle bread'], ['r3', 'kettle vinegar'], ['r4', 'paint'], ['r5', 'tea']]);
    for (const words of textOf.values()) builder.add('itb_a', words);
    const vocabulary = await builder.finish();
    const asked: string[][] = [];
    const statistics = vocabulary.textStatistics.bind(vocabulary);
    vocabulary.textStatistics = (stems) => (asked.push([...stems]), statistics(stems));
    // The text ranks r0 first; the meaning ranks r1 first, and the two agree on their first page, so the fusion does.
    const text: IndexHit[] = [
      { rid: 'r0', src: 'itb_a', score: 3 },
      { rid: 'r1', src: 'itb_a', score: 2.8 },
      { rid: 'r2', src: 'itb_a', score: 1 },
      { rid: 'r3', src: 'itb_a', score: 0.9 },
    ];
    const vector: IndexHit[] = [{ rid: 'r1', src: 'itb_a', score: 0.9 }, { rid: 'r0', src: 'itb_a', score: 0.5 }];
    const search = (rerank: IndexSearchInput['rerank']) =>
      searchIndex(fakeStore(text, vector, [], vocabulary, false, textOf).store, input({ mode: 'hybrid', window: 4, vector: Float32Array.from([1, 0]), semanticRatio: 0.5, rerank }));
    const plain = await search(null);
    expect(plain.hits.map((h) => h.rid)).toEqual(['r1', 'r0', 'r2', 'r3']);
    const reranked = await search({ docs: 1, terms: 2, originalWeight: 0.5 });
    // One feedback row, r1 (the fusion's best): the model is its words, kettle and vinegar, never r0's bread.
    expect(asked).toEqual([['kettl', 'vinegar']]);
    expect(reranked.hits.map((h) => h.rid)).toEqual(['r1', 'r0', 'r3', 'r2']);
  });

  it('when no table is selected, then the index is not opened', async () => {
    const fake = fakeStore(hits(3), []);
    expect(await searchIndex(fake.store, input({ sources: [] }))).toMatchObject({ hits: [], total: 0 });
    expect(fake.opened()).toBe(0);
  });
});

describe('hitDetails', () => {
  it('when the ranking query brought the page\'s rows, then they are detailed without reading the index again', async () => {
    const fake = fakeStore([], [], []);
    const carried: IndexHit = { rid: 'r0', src: 'itb_a', score: 1, row: { pk: '{"id":7}', fields: JSON.stringify({ id: 7, title: 'Kettles', body: 'Boil' }) } };
    const details = await hitDetails(fake.store, 'space_usr_1_test', [carried], sources, queryStems('kettle'));
    expect(details.get('r0')).toMatchObject({ primaryKey: { id: 7 }, snippet: '<mark>Kettles</mark>', matchedColumns: ['title'] });
    expect(fake.opened()).toBe(0);
  });

  it('when a carried row is held in memory (its fields decoded only when read), then it is detailed as any other', async () => {
    const fake = fakeStore([], [], []);
    const builder = new VersionRowsBuilder();
    const column = (value: string): Utf8Data[] => {
      const bytes = Buffer.from(value);
      return [{ values: bytes, valueOffsets: Int32Array.from([0, bytes.length]), offset: 0, length: 1, nullCount: 0, getValid: () => true }];
    };
    builder.addBatch(BigUint64Array.from([1n]), { pk: column('{"id":7}'), fields: column(JSON.stringify({ id: 7, title: 'Kettles', body: 'Boil' })) }, 1);
    const held: IndexHit = { rid: 'r0', src: 'itb_a', score: 1, row: builder.finish(1).rowAt(0) };
    const details = await hitDetails(fake.store, 'space_usr_1_test', [held], sources, queryStems('kettle'));
    expect(details.get('r0')).toMatchObject({ primaryKey: { id: 7 }, fields: { id: 7, title: 'Kettles', body: 'Boil' }, snippet: '<mark>Kettles</mark>' });
    expect(fake.opened()).toBe(0);
  });

  it('when a page is detailed, then each row has its stored key and fields and a snippet marking the query\'s stems; rows of unselected tables are left out', async () => {
    const stored = [
      { rid: 'r0', src: 'itb_a', pk: '{"id":7}', fields: JSON.stringify({ id: 7, title: 'Kettles', body: 'Boil water <fast>' }) },
      { rid: 'x', src: 'itb_gone', pk: '{"id":1}', fields: '{}' },
    ];
    const { store } = fakeStore([], [], stored);
    const details = await hitDetails(store, 'space_usr_1_test', [{ rid: 'r0', src: 'itb_a', score: 1 }, { rid: 'x', src: 'itb_gone', score: 1 }], sources, queryStems('kettle'));
    expect([...details.keys()]).toEqual(['r0']);
    expect(details.get('r0')).toEqual({
      primaryKey: { id: 7 }, fields: { id: 7, title: 'Kettles', body: 'Boil water <fast>' }, snippet: '<mark>Kettles</mark>', matchedColumns: ['title'],
    });
  });
});
