/**
 * HeadingScorer reads every ranked row's heading: its words are cut by character codes (row-words.ts) rather than by
 * the Unicode expression, and the scores must be the expression's to the last bit, whatever the heading holds.
 */
import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, queryStems, stemOfFolded } from '../../../src/search-index/analyzer.js';
import { HeadingScorer } from '../../../src/search-index/heading.js';
import type { HeadingStatistics } from '../../../src/search-index/vocabulary.js';
import { foldWord, isFoldedStopWord } from '../../../src/search-core/stop-words.js';

/** BM25 of a heading as the index scores it, its words cut by the Unicode expression (the scorer's first way). */
function expressionScore(heading: string, stems: Set<string>, statistics: HeadingStatistics): number {
  const frequency = new Map<string, number>();
  let length = 0;
  for (const [raw] of heading.matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    const folded = foldWord(raw);
    if (folded === '' || isFoldedStopWord(folded)) continue;
    length += 1;
    const stemmed = stemOfFolded(folded);
    if (stems.has(stemmed)) frequency.set(stemmed, (frequency.get(stemmed) ?? 0) + 1);
  }
  let score = 0;
  const norm = BM25_K1 * (1 - BM25_B + BM25_B * (length / statistics.averageWords));
  for (const [stemmed, tf] of frequency) {
    const n = statistics.occurrences.get(stemmed)!;
    score += Math.log(1 + (statistics.rows - n + 0.5) / (n + 0.5)) * ((tf * (BM25_K1 + 1)) / (tf + norm));
  }
  return score;
}

const HEADINGS = [
  'Harbor Lights of the Old Town',
  'HARBORS, harbours and the harbor-master’s log',
  'Café harbor: Éngines at the “Harbor” (1999)',
  'the and of',
  '',
  'Lighthouse keepers 42 harbor harbor harbor',
  'Straße am Hafen — Harbor 2',
  'ＦＵＬＬ　ＷＩＤＴＨ harbor',
  'naïve engines; co-operative lighthouse',
  'x'.repeat(50) + ' harbor',
];

describe('HeadingScorer', () => {
  it('when headings hold capitals, accents, dashes, curly quotes, digits, stop words or nothing, then each scores as the Unicode expression cuts it', () => {
    const statistics: HeadingStatistics = {
      rows: 1000,
      averageWords: 4.2,
      occurrences: new Map([['harbor', 40], ['lighthous', 7], ['engin', 12], ['harbour', 3], ['cafe', 2], ['hafen', 1], ['full', 5]]),
    };
    let scored = 0;
    for (const query of ['harbor', 'harbor lighthouse engines', 'harbours cafe', 'hafen full width', 'nothing here']) {
      const stems = new Set(queryStems(query));
      const scorer = new HeadingScorer(stems, statistics);
      const known = new Set([...stems].filter((s) => statistics.occurrences.has(s)));
      for (const heading of HEADINGS) {
        const score = scorer.score(heading);
        expect(score, `${query} / ${heading}`).toBe(expressionScore(heading, known, statistics));
        if (score > 0) scored += 1;
      }
    }
    // Most pairs match some stem: the comparison is of scores, not of zeros.
    expect(scored).toBeGreaterThanOrEqual(15);
  });
});
