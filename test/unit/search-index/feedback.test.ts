/**
 * Pseudo-relevance feedback (src/search-index/feedback.ts): which words RM3's relevance model picks from the
 * first ranking's best rows, how the ranking with the model's words is fused with the first, and how the rows the
 * ranking read are scored again with the expanded query (BM25 from the space's statistics).
 */
import { describe, expect, it } from 'vitest';
import { FEEDBACK_TEXT_CHARS, relevanceModel, rankWithFeedback, rerankWithFeedback, RM3 } from '../../../src/search-index/feedback.js';
import type { TextStatistics } from '../../../src/search-index/vocabulary.js';
import type { IndexHit, IndexSpace, SearchScope, TextQuery } from '../../../src/search-index/index-store.js';

const rows = [
  { text: 'Flutter of swept wings at supersonic speeds. Flutter tests.', score: 10 },
  { text: 'Supersonic flutter of panels, 1956', score: 5 },
];

describe('relevanceModel', () => {
  it('when rows are given, then each word weighs the rows\' scores times its share of each row, and the best words are kept, summing to 1', () => {
    const model = relevanceModel('wing flutter', rows, { ...RM3, terms: 3 });
    // flutter 10 x 2/7 + 5 x 1/3, supersonic 10 x 1/7 + 5 x 1/3, panels 5 x 1/3; swept, wings, speeds, tests 10 x 1/7.
    const raw = [10 * 2 / 7 + 5 / 3, 10 / 7 + 5 / 3, 5 / 3];
    const mass = raw.reduce((a, b) => a + b, 0);
    expect(model.terms.map((t) => t.word)).toEqual(['flutter', 'supersonic', 'panels']);
    model.terms.forEach((t, i) => expect(t.weight).toBeCloseTo(raw[i]! / mass, 12));
    expect(model.queryLength).toBe(2);
  });

  it('when a word of the model is a query word, then it is spelt as the query spells it; numbers, single letters and stop words never join', () => {
    const model = relevanceModel('wing flutter', [{ text: 'Wings, wings and a wing: 1956 1956 1956 x x x of of of', score: 1 }], RM3);
    expect(model.terms.map((t) => t.word)).toEqual(['wing']);
    expect(model.original).toEqual([{ word: 'wing', weight: 1 }, { word: 'flutter', weight: 1 }]);
  });

  it('when words weigh the same, then they are ordered by stem, the same whatever order the rows come in', () => {
    const a = relevanceModel('q', [{ text: 'delta alpha', score: 1 }, { text: 'gamma beta', score: 1 }], RM3);
    const b = relevanceModel('q', [{ text: 'gamma beta', score: 1 }, { text: 'alpha delta', score: 1 }], RM3);
    expect(a.terms.map((t) => t.word)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(b.terms).toEqual(a.terms);
  });

  it('when the rows hold many more words than the model keeps, then it keeps the first of them all ordered by weight and then by stem', () => {
    // 300 words over 10 rows, many of equal weight: the best ten are those of the model that keeps every word.
    const word = (i: number) => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}q`;
    const many = Array.from({ length: 10 }, (_, r) => ({
      text: Array.from({ length: 60 }, (_, k) => word((r * 31 + k * k) % 300)).join(' '),
      score: 10 - (r % 4),
    }));
    const every = relevanceModel('wing', many, { ...RM3, terms: 10_000 });
    const ten = relevanceModel('wing', many, RM3);
    expect(every.terms.length).toBeGreaterThan(100);
    const mass = every.terms.slice(0, 10).reduce((sum, t) => sum + t.weight, 0);
    expect(ten.terms.map((t) => t.stem)).toEqual(every.terms.slice(0, 10).map((t) => t.stem));
    ten.terms.forEach((t, i) => expect(t.weight).toBeCloseTo(every.terms[i]!.weight / mass, 12));
    const sorted = [...every.terms].sort((a, b) => b.weight - a.weight || (a.stem < b.stem ? -1 : 1));
    expect(every.terms).toEqual(sorted);
  });

  it('when only the best FEEDBACK.docs rows count, then a row past them adds nothing', () => {
    const model = relevanceModel('q', [{ text: 'alpha', score: 1 }, { text: 'omega', score: 1 }], { ...RM3, docs: 1 });
    expect(model.terms.map((t) => t.word)).toEqual(['alpha']);
  });
});

describe('rankWithFeedback', () => {
  function fakeSpace(second: IndexHit[]) {
    const asked: Array<{ query: TextQuery; limit: number }> = [];
    const space = {
      texts: async (rids: string[]) => new Map(rids.map((rid) => [rid, rid === 'a' ? 'supersonic flutter' : 'supersonic panels'])),
      searchText: async (query: TextQuery, _scope: SearchScope, limit: number) => {
        asked.push({ query, limit });
        return second;
      },
    } as unknown as Pick<IndexSpace, 'searchText' | 'texts'>;
    return { space, asked };
  }
  const first: IndexHit[] = [{ rid: 'a', src: 't', score: 10 }, { rid: 'b', src: 't', score: 8 }, { rid: 'c', src: 't', score: 2 }];
  const query: TextQuery = { words: 'flutter wings', exclude: ['helicopter'], headings: true };

  it('when the best rows are read, then the model\'s words run as one more query, with the same exclusions and no heading, and each row scores originalWeight x first + (1 - originalWeight) x (query words / model words) x second', async () => {
    const { space, asked } = fakeSpace([{ rid: 'd', src: 't', score: 6 }, { rid: 'a', src: 't', score: 4 }]);
    const ranked = await rankWithFeedback(space, query, first, { srcs: null }, 50, { ...RM3, docs: 2 });
    expect(asked).toEqual([{ query: { words: 'supersonic flutter panels', exclude: ['helicopter'], headings: false }, limit: 50 }]);
    // supersonic (in both rows), flutter and panels: three words for a query of two.
    const weight = (0.5 * 2) / 3;
    const scores = Object.fromEntries(ranked.map((h) => [h.rid, h.score]));
    expect(scores.a).toBeCloseTo(0.5 * 10 + weight * 4, 12);
    expect(scores.b).toBeCloseTo(0.5 * 8, 12);
    expect(scores.c).toBeCloseTo(0.5 * 2, 12);
    expect(scores.d).toBeCloseTo(weight * 6, 12);
  });

  it('when the first ranking is empty, then nothing more is asked', async () => {
    const { space, asked } = fakeSpace([]);
    expect(await rankWithFeedback(space, query, [], { srcs: null }, 50, RM3)).toEqual([]);
    expect(asked).toEqual([]);
  });
});

describe('rerankWithFeedback', () => {
  // 10 rows of 2 words on average; "flutter" in 2 of them, "wing" in 4.
  const statistics: TextStatistics = { rows: 10, averageWords: 2, rowsWith: new Map([['flutter', 2], ['wing', 4]]) };
  const idfFlutter = Math.log(1 + 8.5 / 2.5);
  const idfWing = Math.log(1 + 6.5 / 4.5);
  // BM25's term part, tf 1: 2.2 / (1 + 1.2 (0.25 + 0.75 |d| / 2)): 1 for a row of 2 words, 2.2 / 1.75 for one word.
  const ofTwo = 1;
  const ofOne = 2.2 / 1.75;
  const ranked: IndexHit[] = [{ rid: 'a', src: 't', score: 4 }, { rid: 'b', src: 't', score: 2 }, { rid: 'c', src: 't', score: 1.8 }];
  // Row c's "the" is a stop word: its length is 1.
  const texts = new Map([['a', 'flutter wing'], ['b', 'wing'], ['c', 'the flutter']]);
  const settings = { docs: 1, terms: 2, originalWeight: 0.5 };

  it('when the best row holds the query word and another, then each row scores half its first score plus the BM25 of the model\'s words weighted by p(w) x (1 - 0.5) x query words, and a row holding the rarer word climbs', async () => {
    const asked: string[][] = [];
    const reranked = await rerankWithFeedback('flutter', ranked, texts, (stems) => (asked.push(stems), statistics), 100, settings);
    // The model from row a alone: flutter and wing, 1/2 each; one query word.
    expect(asked).toEqual([['flutter', 'wing']]);
    const weight = 0.5 * 1 * 0.5;
    const expected = {
      a: 0.5 * 4 + weight * (idfFlutter * ofTwo + idfWing * ofTwo),
      b: 0.5 * 2 + weight * idfWing * ofOne,
      c: 0.5 * 1.8 + weight * idfFlutter * ofOne,
    };
    expect(reranked.map((h) => h.rid)).toEqual(['a', 'c', 'b']);
    for (const hit of reranked) expect(hit.score).toBeCloseTo(expected[hit.rid as 'a' | 'b' | 'c'], 12);
    expect(ranked.map((h) => h.score)).toEqual([4, 2, 1.8]);
  });

  it('when a row is deeper than the rows scored again, then it keeps half its first score and stays below them', async () => {
    const reranked = await rerankWithFeedback('flutter', ranked, texts, () => statistics, 2, settings);
    expect(reranked.map((h) => [h.rid, h.score])).toEqual([
      ['a', expect.closeTo(2 + 0.25 * (idfFlutter + idfWing), 12)],
      ['b', expect.closeTo(1 + 0.25 * idfWing * ofOne, 12)],
      ['c', 0.9],
    ]);
  });

  it('when a row is longer than FEEDBACK_TEXT_CHARS, then its first characters are read and its length and frequencies scaled to the whole', async () => {
    // 1,000 times "flutter wing " (13,000 characters): read 10,000 of them, 769 times each word and "flu", scaled by 1.3.
    const long = 'flutter wing '.repeat(1000);
    expect(long.length).toBeGreaterThan(FEEDBACK_TEXT_CHARS);
    const wide: TextStatistics = { rows: 10, averageWords: 2000, rowsWith: new Map([['flutter', 2], ['wing', 4]]) };
    const [hit] = await rerankWithFeedback('flutter', [{ rid: 'a', src: 't', score: 4 }], new Map([['a', long]]), () => wide, 100, settings);
    const tf = 769 * 1.3;
    const norm = 1.2 * (0.25 + (0.75 * 1539 * 1.3) / 2000);
    const part = (tf * 2.2) / (tf + norm);
    expect(hit!.score).toBeCloseTo(2 + 0.25 * (idfFlutter + idfWing) * part, 12);
    // Within a thousandth of the whole text's count (1,000 times each word in 2,000 words).
    expect(part).toBeCloseTo((1000 * 2.2) / (1000 + 1.2), 3);
  });

  it('when a row writes its words in capitals, with accents or digits, then it scores as the same words folded: stop words in capitals left out of its length', async () => {
    const folded = new Map([['a', 'flutter wing'], ['b', 'the wing of 12 café']]);
    const written = new Map([['a', 'FLUTTER Wing'], ['b', 'THE Wing Of 12 Café']]);
    const rows: IndexHit[] = [{ rid: 'a', src: 't', score: 4 }, { rid: 'b', src: 't', score: 2 }];
    const plain = await rerankWithFeedback('flutter', rows, folded, () => statistics, 100, settings);
    const capitals = await rerankWithFeedback('flutter', rows, written, () => statistics, 100, settings);
    expect(capitals).toEqual(plain);
    // Row b's words: wing, 12 and cafe (3, the stop words left out).
    const norm = 1.2 * (0.25 + (0.75 * 3) / 2);
    expect(plain[1]!.score).toBeCloseTo(1 + 0.25 * idfWing * (2.2 / (1 + norm)), 12);
  });

  it('when the query has no word the index keeps, then the ranking is kept as it was', async () => {
    const reranked = await rerankWithFeedback('the of', ranked, texts, () => statistics, 100, settings);
    expect(reranked).toEqual(ranked);
    expect(reranked[0]).not.toBe(ranked[0]);
  });
});
