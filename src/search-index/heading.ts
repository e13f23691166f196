/**
 * A row's heading weighed in Quarry, so that a search asks the index one ranking query instead of two.
 *
 * The heading (a table's first text column, when it has several) adds HEADING_BOOST times its BM25 score to the
 * text's. The index ranked headings with a second full-text query beside the text's, over many more rows than the
 * page, since any text row may have a heading that matches. The text query already reads the rows it ranks: it
 * brings back their headings too, and each is scored here with the space's heading statistics, which the
 * vocabulary keeps in memory (vocabulary.ts). The score is BM25 as the index computes it (k1 1.2, b 0.75, Lucene's
 * idf; words folded, stop words left out, Porter2 stems; statistics counted as the index counts them, see
 * HeadingStatistics), so a page ranks as it did with the second query (test/integration/search-index-headings.test.ts
 * compares them), and exactly for every row read instead of only for those among the best headings.
 */
import { BM25_B as B, BM25_K1 as K1, mayStemTo, stemOfFolded } from './analyzer.js';
import { isFoldedStopWord } from '../search-core/stop-words.js';
import { eachFoldedWord } from './row-words.js';
import type { HeadingStatistics } from './vocabulary.js';

/** Scores headings for one query: built once per search from the query's stems and the space's statistics. */
export class HeadingScorer {
  /** Each query stem's idf (stems no heading holds are left out: they add nothing). */
  private readonly idf = new Map<string, number>();
  /** Whether a heading word may stem to a query stem (most cannot, told without stemming them). */
  private readonly may: (folded: string) => boolean;

  constructor(stems: Iterable<string>, private readonly statistics: HeadingStatistics) {
    for (const stemmed of stems) {
      const n = statistics.occurrences.get(stemmed) ?? 0;
      if (n > 0) this.idf.set(stemmed, Math.log(1 + (statistics.rows - n + 0.5) / (n + 0.5)));
    }
    this.may = mayStemTo(this.idf.keys());
  }

  /** Whether any heading can add to a score (no query stem is in any heading: the text's scores stand). */
  get matters(): boolean {
    return this.idf.size > 0;
  }

  /** The heading's BM25 score for the query (0 when it holds none of its stems). */
  score(heading: string | null | undefined): number {
    if (!heading || this.idf.size === 0) return 0;
    // Every ranked row's heading is read (a hundred per search): cut by character codes, as a row's words are
    // (row-words.ts), and a map made only for a heading that holds a query stem.
    let frequency = null as Map<string, number> | null;
    let length = 0;
    eachFoldedWord(heading, (folded) => {
      if (isFoldedStopWord(folded)) return;
      length += 1;
      if (!this.may(folded)) return;
      const stemmed = stemOfFolded(folded);
      if (!this.idf.has(stemmed)) return;
      frequency ??= new Map();
      frequency.set(stemmed, (frequency.get(stemmed) ?? 0) + 1);
    });
    if (frequency === null) return 0;
    let score = 0;
    const norm = K1 * (1 - B + B * (length / (this.statistics.averageWords || 1)));
    for (const [stemmed, tf] of frequency) score += this.idf.get(stemmed)! * ((tf * (K1 + 1)) / (tf + norm));
    return score;
  }
}
