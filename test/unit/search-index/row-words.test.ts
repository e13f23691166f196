/**
 * Rows' words counted once per version (src/search-index/row-words.ts): relevance feedback reading them gives the
 * same model and the same scores, to the last bit and in the same order, as reading the rows' text again.
 */
import { describe, expect, it } from 'vitest';
import { FEEDBACK_TEXT_CHARS, relevanceModel, rerankWithFeedback, RM3 } from '../../../src/search-index/feedback.js';
import { countRowWords, RowWordsBuilder, type RowWords } from '../../../src/search-index/row-words.js';
import type { IndexHit } from '../../../src/search-index/index-store.js';
import type { TextStatistics } from '../../../src/search-index/vocabulary.js';

const WORDS = ['flutter', 'wings', 'wing', 'supersonic', 'panels', 'panel', 'speeds', 'boundary', 'layer', 'heat', 'transfer', 'cone', 'Cones', 'Mach', 'the', 'of', 'and', 'a', '1956', 'x', 'Café', 'naïve', 'DRAG', 'lift-off', 'lying'];

/** A text of `n` words drawn from WORDS by a fixed rule (capitals, accents, digits, stop words, a dash among them). */
const textOf = (seed: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(seed * 7 + k * k * 3 + k) % WORDS.length]).join(k(seed));
const k = (seed: number) => (seed % 3 === 0 ? ', ' : seed % 3 === 1 ? ' ' : '. ');

const texts: Array<string | null> = [
  ...Array.from({ length: 40 }, (_, i) => textOf(i, 5 + ((i * 13) % 60))),
  'flutter wing '.repeat(1000), // longer than FEEDBACK_TEXT_CHARS: counted that far, scaled to the whole
  '',
  null,
  'THE OF AND A', // stop words only
];

function counted(): Map<string, RowWords> {
  const builder = new RowWordsBuilder();
  texts.forEach((text) => builder.add(text));
  const table = builder.finish();
  return new Map(texts.map((_, i) => [`r${i}`, table.at(i)]));
}

const statistics = (stems: string[]): TextStatistics => ({
  rows: 1000, averageWords: 30, rowsWith: new Map(stems.map((s, i) => [s, 5 + ((i * 37) % 400)])),
});

describe('rows\' words counted once', () => {
  it('when the model is built from counted words, then it is the model of the same rows\' text', () => {
    const words = counted();
    for (const query of ['flutter wing', 'supersonic cones drag', 'café heat', 'lying panels']) {
      const fromText = relevanceModel(query, texts.slice(0, 10).map((text, i) => ({ text: (text ?? '').slice(0, FEEDBACK_TEXT_CHARS), score: 10 - i })), RM3);
      const fromWords = relevanceModel(query, texts.slice(0, 10).map((_, i) => ({ text: words.get(`r${i}`)!, score: 10 - i })), RM3);
      expect(fromWords, query).toEqual(fromText);
      expect(fromText.terms.length, query).toBeGreaterThan(0);
    }
  });

  it('when the rows come as text and as words two versions counted, then the model is that of their text', () => {
    const words = counted();
    const other = new RowWordsBuilder();
    texts.slice(0, 10).forEach((text) => other.add(text));
    const otherTable = other.finish();
    for (const query of ['flutter wing', 'supersonic cones drag', 'café heat']) {
      const fromText = relevanceModel(query, texts.slice(0, 10).map((text, i) => ({ text: (text ?? '').slice(0, FEEDBACK_TEXT_CHARS), score: 10 - i })), RM3);
      // Rows 0-3 counted by one version, 4-6 by another (other ids for the same words), 7-9 as text.
      const mixed = texts.slice(0, 10).map((text, i) => ({ text: i < 4 ? words.get(`r${i}`)! : i < 7 ? otherTable.at(i) : (text ?? ''), score: 10 - i }));
      expect(relevanceModel(query, mixed, RM3), query).toEqual(fromText);
    }
  });

  it('when rows are scored again from their counted words, then every score and the order are those of their text, to the last bit', async () => {
    const words = counted();
    const ranked: IndexHit[] = texts.map((_, i) => ({ rid: `r${i}`, src: 't', score: 20 - i * 0.37 }));
    const fromText = new Map(texts.map((text, i) => [`r${i}`, text ?? '']));
    for (const query of ['flutter wing', 'supersonic cones drag', 'café heat', 'boundary layer transfer']) {
      const byText = await rerankWithFeedback(query, ranked, fromText, statistics, 30, RM3);
      const byWords = await rerankWithFeedback(query, ranked, words, statistics, 30, RM3);
      expect(byWords.map((h) => [h.rid, h.score]), query).toEqual(byText.map((h) => [h.rid, h.score]));
      // The model found words to add, and the rows scored again moved.
      expect(byText.map((h) => h.rid), query).not.toEqual(ranked.map((h) => h.rid));
    }
  });

  it('when a text is longer than FEEDBACK_TEXT_CHARS, then its words are counted that far and scaled to the whole', () => {
    const long = counted().get('r40')!;
    const folded = [...long.ids].map((id) => long.words.folded[id]);
    // 10,000 characters of "flutter wing ": 769 whole times each, then "flu".
    expect(folded).toEqual(['flutter', 'wing', 'flu']);
    expect([...long.counts]).toEqual([769, 769, 1]);
    expect(long.length).toBe(1539);
    expect(long.scale).toBe(13_000 / FEEDBACK_TEXT_CHARS);
  });

  it('when a row has no text or stop words only, then it has no words and scores its first score alone', async () => {
    const words = counted();
    for (const rid of ['r41', 'r42', 'r43']) expect(words.get(rid)!.ids.length, rid).toBe(0);
    const [hit] = await rerankWithFeedback('flutter', [{ rid: 'r0', src: 't', score: 4 }, { rid: 'r42', src: 't', score: 3 }], words, statistics, 100, RM3);
    expect(hit!.rid).toBe('r0');
  });
});

describe('countRowWords', () => {
  const rows = { rows: texts.length, value: (_column: string, place: number) => texts[place] ?? null };

  it('when the budget holds them, then every row\'s words are counted by its place', async () => {
    const table = (await countRowWords(rows, 1024 * 1024))!;
    const expected = counted();
    texts.forEach((_, i) => expect([...table.at(i).ids], `r${i}`).toEqual([...expected.get(`r${i}`)!.ids]));
    expect(table.bytes).toBeGreaterThan(0);
  });

  it('when they would take more than the budget, then nothing is kept', async () => {
    expect(await countRowWords(rows, 512)).toBeNull();
  });
});
