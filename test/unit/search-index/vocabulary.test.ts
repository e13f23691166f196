/**
 * A space's words in memory: the bounded edit-distance walk over sorted words finds exactly the words a
 * comparison with every word finds, stems make a word present, and each table's words stay its own.
 */
import { describe, expect, it } from 'vitest';
import { editDistance } from '../../../src/sql-search/vocabulary.js';
import { levenshtein, VocabularyBuilder } from '../../../src/search-index/vocabulary.js';

/** A small deterministic generator: the same words on every run. */
function words(n: number, seed: number): string[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const letters = 'aeiklnorst';
  return Array.from({ length: n }, () => Array.from({ length: 3 + Math.floor(next() * 8) }, () => letters[Math.floor(next() * letters.length)]).join(''));
}

describe('SpaceVocabulary', () => {
  it('when words near a misspelt one are asked for, then the walk finds exactly those within the edits, closest and most frequent first', async () => {
    const known = words(3000, 7);
    const builder = new VocabularyBuilder(40);
    builder.add('src_a', known.join(' '));
    const vocabulary = await builder.finish();
    for (const typed of words(200, 11)) {
      for (const max of [1, 2]) {
        const expected = [...new Set(known)].filter((w) => w !== typed && editDistance(typed, w, max) <= max);
        const found = vocabulary.near(typed, max, null);
        expect(found.map((f) => f.word).sort(), `${typed} ${max}`).toEqual(expected.sort());
        for (const f of found) expect(f.distance).toBe(editDistance(typed, f.word, max));
        const order = found.map((f) => [f.distance, -f.count, f.word] as const);
        expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : 1)));
      }
    }
  });

  it('when a row is plain ASCII, then it is cut into the same words, counts and rows as the same row with an accented word', async () => {
    const text = 'Kettle, kettles_42 & KETTLE-boil x9 ab "quoted" 2024 ' + 'w'.repeat(40) + ' ' + 'v'.repeat(41) + ' kettle\u007fjar';
    const ascii = new VocabularyBuilder(40);
    ascii.add('src_a', text);
    ascii.add('src_a', 'kettle jar');
    const accented = new VocabularyBuilder(40);
    accented.add('src_a', `${text} \u00e9t\u00e9`);
    accented.add('src_a', 'kettle jar \u00e9t\u00e9');
    const [a, b] = [await ascii.finish(), await accented.finish()];
    expect(b.terms - a.terms).toBe(2); // "ete" and its stem, nothing else
    for (const word of ['kettle', 'kettles', '42', 'boil', 'x9', 'ab', 'quoted', '2024', 'jar', 'w'.repeat(40), 'v'.repeat(41)]) {
      expect(a.near(word, 1, null), word).toEqual(b.near(word, 1, null));
      expect(a.estimateRows([word], null), word).toBe(b.estimateRows([word], null));
    }
    expect(a.near('kettl', 1, null)).toEqual([{ word: 'kettle', distance: 1, count: 4 }]);
    expect(a.estimateRows(['jar'], null)).toBe(2);
  });

  it('when a swap of neighbours is compared, then it is one edit apart for words and two for the index\'s stems', async () => {
    const builder = new VocabularyBuilder(40);
    builder.add('src_a', 'kettle');
    expect((await builder.finish()).near('ketlte', 1, null)).toEqual([{ word: 'kettle', distance: 1, count: 1 }]);
    expect(levenshtein('ketlt', 'kettl', 1)).toBe(2);
    expect(levenshtein('kettel', 'kettle', 2)).toBe(2);
  });

  it('when tables are selected, then only their words and stems count; words are folded as the index folds them', async () => {
    const builder = new VocabularyBuilder(40);
    builder.add('src_a', 'Kettles boil; Résumé');
    builder.add('src_b', 'Orchids and kettles');
    builder.add('src_b', 'kettles again');
    const vocabulary = await builder.finish();
    expect(vocabulary.hasStem('kettl', ['src_a'])).toBe(true);
    expect(vocabulary.hasStem('orchid', ['src_a'])).toBe(false);
    expect(vocabulary.hasStem('orchid', null)).toBe(true);
    expect(vocabulary.hasStem('resum', ['src_a'])).toBe(true);
    expect(vocabulary.hasStem('and', null)).toBe(false);
    expect(vocabulary.near('kettels', 1, null)).toEqual([{ word: 'kettles', distance: 1, count: 3 }]);
    expect(vocabulary.near('kettels', 1, ['src_a'])).toEqual([{ word: 'kettles', distance: 1, count: 1 }]);
  });

  it('when rows are gathered, then each stem\'s rows estimate the matches of a query and the headings are counted as the index counts them', async () => {
    const builder = new VocabularyBuilder(40);
    for (let i = 0; i < 100; i++) builder.add('src_a', `${i % 2 === 0 ? 'kettle kettle' : 'teapot'} ${i % 4 === 0 ? 'boiling' : ''} ${i % 5 === 0 ? 'teapots' : ''}`, i % 10 === 0 ? '' : 'The Kettle kettle');
    const vocabulary = await builder.finish();
    // "kettle" in 50 of 100 rows (twice in each: a row counts once), "boil" in 25 of them: any of the two, 50 + 25 - 12.5.
    expect(vocabulary.estimateRows(['kettl'], null)).toBe(50);
    expect(vocabulary.estimateRows(['kettl', 'boil'], null)).toBeCloseTo(62.5);
    expect(vocabulary.estimateRows(['kettl'], ['src_other'])).toBe(0);
    // "teapot" in 50 rows, "teapots" in 20 (10 of them with "teapot"): the stem's rows as if independent, 50 + 20 - 10.
    expect(vocabulary.estimateRows(['teapot'], null)).toBeCloseTo(60);
    // 100 rows have a heading column (10 of them empty), 90 x 2 words without "the", the stem twice in each.
    expect(vocabulary.headingStatistics(['kettl', 'teapot'])).toEqual({ rows: 100, averageWords: 1.8, occurrences: new Map([['kettl', 180], ['teapot', 0]]) });
  });

  it('when the text\'s statistics are asked, then every table counts (the index\'s statistics are the space\'s): rows, words without stop words, rows per stem', async () => {
    const builder = new VocabularyBuilder(40);
    builder.add('src_a', 'The wing flutters');
    builder.add('src_a', 'wing wing');
    builder.add('src_b', 'flutter');
    const vocabulary = await builder.finish();
    // 2 + 2 + 1 words ("the" left out) over 3 rows; "wing" in 2 rows, "flutter" in one row of each table.
    expect(vocabulary.textStatistics(['wing', 'flutter', 'kettl'])).toEqual({ rows: 3, averageWords: 5 / 3, rowsWith: new Map([['wing', 2], ['flutter', 2], ['kettl', 0]]) });
  });
});
