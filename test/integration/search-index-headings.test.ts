/**
 * Headings weighed in Quarry (src/search-index/heading.ts) rank as the index's own second query over the
 * headings did: the same rows in the same order with the same scores, on a real LanceDB space, so one ranking query
 * replaces two without changing an answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queryStems } from '../../src/search-index/analyzer.js';
import { HeadingScorer } from '../../src/search-index/heading.js';
import { IndexStore, type IndexRow } from '../../src/search-index/index-store.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-index-headings-'));
const CACHE_BYTES = { index: 16 * 1024 * 1024, metadata: 8 * 1024 * 1024 };
const store = new IndexStore({ uri: dir, readConsistencySeconds: 0, cacheBytes: CACHE_BYTES });
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const WORDS = ['harbor', 'engines', 'forest', 'market', 'copper', 'signals', 'meadow', 'the', 'valley', 'bridges', 'lantern', 'Café', 'boiling', 'kettle'];
const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 5 + (i % 3) * k) % WORDS.length]).join(' ');
const row = (i: number): IndexRow => {
  const head = i % 5 === 0 ? '' : pick(i, 1 + (i % 4));
  return { rid: `r${i}`, src: i % 2 === 0 ? 'itb_even' : 'itb_odd', pk: `{"id":${i}}`, hash: `h${i}`, thash: `t${i}`, text: `${head}\n${pick(i + 3, 4 + (i % 9))}`, head, fields: `{"id":${i}}` };
};

describe('headings weighed in Quarry', () => {
  it('when a query is ranked with the space\'s heading statistics, then it matches the ranking of a second query over the headings', async () => {
    const space = await store.ensureSpace('space_headings_test');
    await space.append(Array.from({ length: 600 }, (_, i) => row(i)));
    await space.prepareVocabulary();
    const vocabulary = await space.vocabulary();
    expect(vocabulary).not.toBeNull();

    for (const words of ['harbor engine', 'copper signal meadow', 'the café', 'boiling kettles in the valley', 'lantern', 'bridge forest market']) {
      // The whole space (a search that selects some tables reads them through a filter, under which the index's
      // second query weighed headings differently from its unfiltered scores; Quarry's statistics are the space's).
      for (const srcs of [null]) {
        const stems = queryStems(words);
        const headingScorer = new HeadingScorer(stems, vocabulary!.headingStatistics(stems));
        expect(headingScorer.matters, words).toBe(true);
        const oneQuery = await space.searchText({ words, headings: true, headingScorer, withRows: true }, { srcs }, 50);
        const twoQueries = await space.searchText({ words, headings: true, headingDepth: 1000 }, { srcs }, 50);
        expect(oneQuery.length, words).toBeGreaterThan(0);
        // The same rows with the same scores (the index adds up 32-bit floats: equal to a thousandth of the score).
        const expected = new Map(twoQueries.map((h) => [h.rid, h.score]));
        expect(oneQuery.map((h) => h.rid).sort(), words).toEqual([...expected.keys()].sort());
        for (const hit of oneQuery) expect(Math.abs(hit.score - expected.get(hit.rid)!), `${words} ${hit.rid}`).toBeLessThan(1e-3 * Math.max(1, hit.score));
        // The page's rows come with the ranking itself.
        expect(oneQuery[0]!.row?.pk).toMatch(/^\{"id":\d+\}$/);
      }
    }
  }, 120_000);

  it('when the store is given cache sizes, then LanceDB\'s caches hold the searched space within them', async () => {
    const space = (await store.space('space_headings_test'))!;
    await space.searchText({ words: 'harbor engines forest' }, { srcs: null }, 50);
    const held = store.cachedBytes()!;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(CACHE_BYTES.index + CACHE_BYTES.metadata);
  });
});
