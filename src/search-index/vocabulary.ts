/**
 * The words of a search space, in memory, so that typo tolerance asks the index nothing about a word the
 * selected tables hold, and corrects a missing word from the words they hold instead of a fuzzy lookup of rows.
 *
 * Each indexed table keeps its own words (folded as the index folds them: lower case, accents removed), sorted, with
 * how often each occurs, and the stems they reduce to: the index matches a query word by its stem, so a word is
 * present exactly when some selected table holds a word of the same stem. A search reads the tables it selects, as
 * the lookup it replaces did.
 *
 * A missing word is corrected by a bounded edit-distance search over a table's sorted words: the words are walked
 * in order with one row of the distance table per letter, a row shared by every word with the same prefix (the
 * sorted list is a trie laid flat), and a whole prefix range is skipped as soon as its row shows that no word under
 * it can come within the allowed edits (a Levenshtein automaton's dead state). No package installed here offers an
 * FST or a Levenshtein automaton (js-levenshtein compares two strings), so the walk over the sorted words is written
 * here, in the optimal string alignment distance typos.ts has always used (a swap of neighbours is one
 * edit).
 *
 * The same reading of the rows gathers what a search needs beyond typos, so it asks the index one query: how many
 * rows hold each stem (to estimate a total, index-search.ts, and to weigh the words feedback adds, feedback.ts), the
 * rows' words in all, and the headings' statistics (to weigh each ranked row's heading, heading.ts).
 */
import stem from 'wink-porter2-stemmer';
import { foldWord, isFoldedStopWord } from '../search-core/stop-words.js';

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;
/** A correction is at most 2 edits from a word of 5 letters or more: shorter words can never be one. */
const MIN_CANDIDATE = 3;

/** A word near a misspelt one: its edits from it and how often the selected tables hold it. */
export interface NearWord {
  word: string;
  distance: number;
  count: number;
}

/**
 * Levenshtein distance (a swap of neighbours is two edits), or max + 1 as soon as it must exceed `max`: how the
 * index's fuzzy matching compares a word's stem with the stems it holds.
 */
export function levenshtein(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      current.push(value);
      if (value < least) least = value;
    }
    if (least > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** How often the words of one stem occur in a table's rows: in how many rows (at most the table's rows). */
export interface TableStats {
  /** Rows read. */
  rows: number;
  /** Their words in all, stop words left out (the average length BM25 divides a row's length by). */
  words: number;
  /** Rows holding a word of each stem (estimated when several words share it, see finish()). */
  stemRows: Map<string, number>;
  /**
   * The rows' headings as the index's BM25 counts them (measured against its scores): every row that has a heading
   * column (an empty heading too), their words in all (stop words left out), and each stem's occurrences.
   */
  heading: { rows: number; words: number; occurrences: Map<string, number> };
}

/** One indexed table's words. */
export class TableWords {
  constructor(
    /** Sorted (code unit order), each at least MIN_CANDIDATE long: the words a correction may be. */
    private readonly words: string[],
    private readonly counts: Uint32Array,
    readonly stats: TableStats,
  ) {}

  get size(): number {
    return this.words.length + this.stats.stemRows.size + this.stats.heading.occurrences.size;
  }

  hasStem(stemmed: string): boolean {
    return this.stats.stemRows.has(stemmed);
  }

  /** Adds to `into` every word within `max` edits of `word` (itself left out), summing counts across tables. */
  near(word: string, max: number, into: Map<string, NearWord>): void {
    const m = word.length;
    const rows: Int32Array[] = [Int32Array.from({ length: m + 1 }, (_, j) => j)];
    let previous = '';
    let valid = 0;
    let i = 0;
    while (i < this.words.length) {
      const candidate = this.words[i]!;
      if (Math.abs(candidate.length - m) > max) {
        i += 1;
        continue;
      }
      let depth = 0;
      const shared = Math.min(valid, candidate.length, previous.length);
      while (depth < shared && candidate.charCodeAt(depth) === previous.charCodeAt(depth)) depth += 1;
      let dead = 0;
      for (let d = depth + 1; d <= candidate.length; d++) {
        const row = (rows[d] ??= new Int32Array(m + 1));
        const above = rows[d - 1]!;
        const c = candidate.charCodeAt(d - 1);
        // Only cells within `max` of the diagonal can stay within `max` edits: the rest are "too far" (max + 1).
        const lo = Math.max(1, d - max);
        const hi = Math.min(m, d + max);
        row[lo - 1] = lo === 1 ? d : max + 1;
        if (hi < m) row[hi + 1] = max + 1;
        let least = lo === 1 ? d : max + 1;
        for (let j = lo; j <= hi; j++) {
          const cost = c === word.charCodeAt(j - 1) ? 0 : 1;
          let value = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
          if (d > 1 && j > 1 && c === word.charCodeAt(j - 2) && candidate.charCodeAt(d - 2) === word.charCodeAt(j - 1)) {
            value = Math.min(value, rows[d - 2]![j - 2]! + 1);
          }
          row[j] = value;
          if (value < least) least = value;
        }
        if (least > max) {
          dead = d;
          break;
        }
      }
      previous = candidate;
      if (dead > 0) {
        // No word that starts with these `dead` letters comes within `max` edits: skip them all.
        valid = dead;
        i = this.after(candidate.slice(0, dead), i);
        continue;
      }
      valid = candidate.length;
      const distance = rows[candidate.length]![m]!;
      if (distance <= max && candidate !== word) {
        const entry = into.get(candidate);
        if (entry) entry.count += this.counts[i]!;
        else into.set(candidate, { word: candidate, distance, count: this.counts[i]! });
      }
      i += 1;
    }
  }

  /** The index of the first word after `from` that does not start with `prefix` (words are sorted). */
  private after(prefix: string, from: number): number {
    let lo = from + 1;
    let hi = this.words.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.words[mid]!.startsWith(prefix)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The words of every table of a space, by the table's id (`src`). */
export class SpaceVocabulary {
  constructor(private readonly tables: Map<string, TableWords>) {}

  /** Words and stems held, over all tables (what the memory is proportional to). */
  get terms(): number {
    let n = 0;
    for (const table of this.tables.values()) n += table.size;
    return n;
  }

  private selected(srcs: string[] | null): TableWords[] {
    if (srcs === null) return [...this.tables.values()];
    return srcs.map((src) => this.tables.get(src)).filter((t): t is TableWords => t !== undefined);
  }

  /** Some selected table (null: any) holds a word that stems to `stemmed`, so the index would match it. */
  hasStem(stemmed: string, srcs: string[] | null): boolean {
    return this.selected(srcs).some((table) => table.hasStem(stemmed));
  }

  /** Words of the selected tables within `max` edits of `word`, closest first, then most frequent, then by spelling. */
  near(word: string, max: number, srcs: string[] | null): NearWord[] {
    const found = new Map<string, NearWord>();
    for (const table of this.selected(srcs)) table.near(word, max, found);
    return [...found.values()].sort((a, b) => a.distance - b.distance || b.count - a.count || (a.word < b.word ? -1 : 1));
  }

  /**
   * Rows of the selected tables expected to hold any of these stems, were each stem in rows independently of the
   * others: per table, rows x (1 - the product over the stems of the share of rows without it). Exact for one stem;
   * words that come together (a phrase's words) make it an overestimate, never more than the table's rows.
   */
  estimateRows(stems: Iterable<string>, srcs: string[] | null): number {
    const list = [...stems];
    let sum = 0;
    for (const { stats } of this.selected(srcs)) {
      if (stats.rows === 0) continue;
      let none = 1;
      for (const stemmed of list) none *= 1 - (stats.stemRows.get(stemmed) ?? 0) / stats.rows;
      sum += stats.rows * (1 - none);
    }
    return sum;
  }

  /**
   * The statistics of the rows' text for BM25, every table together (the index's statistics are the space's, whatever
   * a search selects): rows, their average length in words, and rows per stem among these stems.
   */
  textStatistics(stems: Iterable<string>): TextStatistics {
    const { rows, averageWords, counts } = this.summed(stems, (stats) => ({ rows: stats.rows, words: stats.words, perStem: stats.stemRows }));
    return { rows, averageWords, rowsWith: counts };
  }

  /**
   * The statistics of the space's headings, every table together (as the index's own statistics are the space's):
   * rows with a heading, their average length in words, and rows per stem among these stems.
   */
  headingStatistics(stems: Iterable<string>): HeadingStatistics {
    const { rows, averageWords, counts } = this.summed(stems, ({ heading }) => ({ rows: heading.rows, words: heading.words, perStem: heading.occurrences }));
    return { rows, averageWords, occurrences: counts };
  }

  /** One field's rows, average words and counts per stem (among `stems`) over every table of the space. */
  private summed(
    stems: Iterable<string>,
    field: (stats: TableStats) => { rows: number; words: number; perStem: Map<string, number> },
  ): { rows: number; averageWords: number; counts: Map<string, number> } {
    let rows = 0;
    let words = 0;
    const counts = new Map<string, number>();
    const list = [...stems];
    for (const { stats } of this.tables.values()) {
      const part = field(stats);
      rows += part.rows;
      words += part.words;
      for (const stemmed of list) counts.set(stemmed, (counts.get(stemmed) ?? 0) + (part.perStem.get(stemmed) ?? 0));
    }
    return { rows, averageWords: rows > 0 ? words / rows : 0, counts };
  }
}

/**
 * What BM25 needs to weigh a heading's words, as the index counts them: rows (an empty heading too), their average
 * length in words, and each query stem's occurrences in all headings (the index's idf counts occurrences, not rows).
 */
export interface HeadingStatistics {
  rows: number;
  averageWords: number;
  occurrences: Map<string, number>;
}

/** What BM25 needs to weigh words of the rows' text: rows, their average length in words, rows holding each stem. */
export interface TextStatistics {
  rows: number;
  averageWords: number;
  rowsWith: Map<string, number>;
}

/** Rows handed to the builder between two yields to other work while the vocabulary is finished. */
const FINISH_SLICE = 2000;

interface Gathered {
  rows: number;
  /** Each word's occurrences and rows (a row counts once: `last` says which row counted last). */
  words: Map<string, { count: number; rows: number; last: number }>;
  heading: { rows: number; words: number; occurrences: Map<string, number> };
}

/**
 * Gathers a space's words from its rows' text; `terms` says how many distinct ones so far (to bound memory). Every
 * word of every row passes here (a million rows of articles are about 150 million words), so a word costs one map
 * lookup, and ASCII text, the usual case, is cut into words by its character codes rather than a match per word.
 */
export class VocabularyBuilder {
  private readonly tables = new Map<string, Gathered>();
  terms = 0;

  constructor(private readonly maxTokenBytes: number) {}

  private fold(raw: string): string | null {
    const word = foldWord(raw);
    if (word === '' || (word.length * 3 > this.maxTokenBytes && Buffer.byteLength(word) > this.maxTokenBytes)) return null;
    return word;
  }

  private count(table: Gathered, word: string, row: number): void {
    const entry = table.words.get(word);
    if (entry === undefined) {
      table.words.set(word, { count: 1, rows: 1, last: row });
      this.terms += 1;
      return;
    }
    entry.count += 1;
    if (entry.last !== row) {
      entry.last = row;
      entry.rows += 1;
    }
  }

  /** One row: its text, and its heading when its table has one. */
  add(src: string, text: string, heading?: string | null): void {
    let table = this.tables.get(src);
    if (!table) {
      table = { rows: 0, words: new Map(), heading: { rows: 0, words: 0, occurrences: new Map() } };
      this.tables.set(src, table);
    }
    const row = (table.rows += 1);
    if (ASCII.test(text)) {
      // ASCII words are runs of letters and digits, folded by lower-casing (what WORD and fold() make of them).
      const lower = text.toLowerCase();
      let start = -1;
      for (let i = 0; i <= lower.length; i++) {
        const c = i < lower.length ? lower.charCodeAt(i) : 0;
        const inWord = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
        if (inWord) {
          if (start < 0) start = i;
        } else if (start >= 0) {
          if (i - start <= this.maxTokenBytes) this.count(table, lower.slice(start, i), row);
          start = -1;
        }
      }
    } else {
      for (const [raw] of text.matchAll(WORD)) {
        const word = this.fold(raw);
        if (word !== null) this.count(table, word, row);
      }
    }
    // An empty heading is a row of the heading's index all the same (of no words): it counts in the statistics.
    if (heading === null || heading === undefined) return;
    table.heading.rows += 1;
    for (const [raw] of heading.matchAll(WORD)) {
      const word = this.fold(raw);
      if (word === null || isFoldedStopWord(word)) continue;
      table.heading.words += 1;
      table.heading.occurrences.set(word, (table.heading.occurrences.get(word) ?? 0) + 1);
    }
  }

  /** The vocabulary; stemming every word takes a while, so other work runs between slices of it. */
  async finish(): Promise<SpaceVocabulary> {
    const tables = new Map<string, TableWords>();
    const stems = new Map<string, string>();
    let done = 0;
    const stemOf = async (word: string): Promise<string> => {
      let found = stems.get(word);
      if (found === undefined) {
        stems.set(word, (found = stem(word)));
        if ((done += 1) % FINISH_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      return found;
    };
    for (const [src, gathered] of this.tables) {
      // The rows' length in words as BM25 counts it: every occurrence of a word the index keeps (stop words dropped).
      let textWords = 0;
      for (const [word, { count }] of gathered.words) if (!isFoldedStopWord(word)) textWords += count;
      const stats: TableStats = { rows: gathered.rows, words: textWords, stemRows: new Map(), heading: { rows: gathered.heading.rows, words: gathered.heading.words, occurrences: new Map() } };
      const words: string[] = [];
      // A stem's rows from its words' rows ("kettle", "kettles"), as if they came in rows independently: the share of
      // rows holding none of them is the product of the shares without each.
      const without = new Map<string, number>();
      for (const [word, { rows }] of gathered.words) {
        // The index drops stop words, so they never make a word present.
        if (!isFoldedStopWord(word)) {
          const stemmed = await stemOf(word);
          without.set(stemmed, (without.get(stemmed) ?? 1) * (1 - rows / gathered.rows));
        }
        if (word.length >= MIN_CANDIDATE) words.push(word);
      }
      for (const [stemmed, share] of without) stats.stemRows.set(stemmed, gathered.rows * (1 - share));
      for (const [word, n] of gathered.heading.occurrences) {
        const stemmed = await stemOf(word);
        stats.heading.occurrences.set(stemmed, (stats.heading.occurrences.get(stemmed) ?? 0) + n);
      }
      words.sort();
      tables.set(src, new TableWords(words, Uint32Array.from(words, (w) => gathered.words.get(w)!.count), stats));
    }
    this.tables.clear();
    return new SpaceVocabulary(tables);
  }
}
