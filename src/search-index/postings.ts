/**
 * The text of a version's rows held in memory (row-cache.ts) as an inverted index: for each stem, the rows that hold
 * it and the part of their BM25 score that does not depend on the query (an impact). With it a natural search ranks in Quarry's process what it would otherwise ask LanceDB's text
 * index for, and costs what scoring its words' rows costs: the postings of a rare word are a few dozen rows, a common
 * one's some tens of thousands, against 3 to 10 ms for LanceDB's query plan, whatever the words (docs/benchmarks.md).
 * It is what Sphinx and Lucene keep for the same job, built here from the words row-words.ts has counted already.
 *
 * The scores are LanceDB's BM25 (lance's inverted index, as LanceDB 0.31 builds it with Quarry's settings): k1 1.2,
 * b 0.75, Lucene's idf ln(1 + (N - n + 0.5) / (n + 0.5)), N the rows with a text (an empty text is a row of no
 * words, a null one no row at all), n the rows holding the stem; a row's length its words other than stop words and
 * words longer than the index keeps (MAX_TOKEN_BYTES); a query word counted once however often it is typed. Probes
 * against LanceDB's own scores on the corpus agree to its 32-bit floats (test/unit/search-index/postings.test.ts
 * compares them on a real LanceDB table). It is built only when every row's text was counted whole: a row longer than
 * the part row-words.ts counts (FEEDBACK_TEXT_CHARS) leaves the version to LanceDB's index.
 *
 * One difference, for words with accents: LanceDB 0.31 stems such a word before folding it, so that "Éngines" is
 * another term than "engines" there; the postings read every word as Quarry's analyzer does everywhere else (folded,
 * then stemmed: snippets, typo checks, relevance feedback), so "engines" finds "Éngines" here.
 */
import type { RowWordsTable } from './row-words.js';
import { BM25_B as B, BM25_K1 as K1 } from './analyzer.js';

/** A word's weight in BM25, idf (K1 + 1), for `documents` rows of which `holding` hold it (Lucene's idf). */
export function bm25Weight(documents: number, holding: number): number {
  return Math.log(1 + (documents - holding + 0.5) / (holding + 0.5)) * (K1 + 1);
}

/** A row's part of a word's score that does not depend on the query: tf / (tf + K1 (1 - B + B |d| / avgdl)). */
export function bm25Impact(tf: number, length: number, averageLength: number): number {
  return tf / (tf + K1 * (1 - B + (B * length) / averageLength));
}

/** Rows handed to the builder between two yields to other work, and postings given their impact. */
const BUILD_SLICE_ROWS = 5000;
const IMPACT_SLICE = 500_000;

/**
 * Rows kept, best first, of each word held by more rows than this (the "top list"): a one-word query ranks its page
 * from them without scoring every row that holds the word (a common word's thousands). It covers the rows a natural
 * search ranks for a page with its feedback (RANK_DEPTH + 1 = 101, index-search.ts), with room for rows of tables
 * the search leaves out; a search that needs more, or whose tables leave too few of them, scores every row.
 */
export const TOP_ROWS = 256;

/** One word's best rows by impact (its score up to the word's weight), best first. */
interface TopRows {
  places: Uint32Array;
  impacts: Float32Array;
}

/** A ranking from the postings: rows by their place in the version's rows, best first, with their scores. */
export interface PostingsRanking {
  places: Uint32Array;
  scores: Float64Array;
}

export class TextPostings {
  /** Each row's score while a query is scored (reset after), and the rows touched. */
  private readonly scratch: Float64Array;
  private readonly touched: Uint32Array;
  /**
   * Each posting's part of BM25 that does not depend on the query, tf / (tf + K1 (1 - B + B |d| / avgdl)): a word's
   * score in the row is its weight (idf (K1 + 1)) times this, a multiplication per posting when a query is scored.
   * Kept in 32 bits, as the index keeps its scores.
   */
  private readonly impacts: Float32Array;

  constructor(
    private readonly stemIdOf: (stem: string) => number | undefined,
    /** Per stem id, where its rows start in `places` (one more entry than stems: the end of the last). */
    private readonly starts: Uint32Array,
    private readonly places: Uint32Array,
    impacts: Float32Array,
    /** Each row's table (`src`), by its index in `srcs`. */
    private readonly srcOf: Uint16Array,
    private readonly srcs: string[],
    /** Rows with a text: BM25's N. */
    readonly documents: number,
    /** Their average length in words the index keeps: BM25's avgdl. */
    readonly averageLength: number,
    /** By stem id, the best TOP_ROWS rows of each stem more rows hold. */
    private readonly tops: ReadonlyMap<number, TopRows> = new Map(),
  ) {
    this.impacts = impacts;
    this.scratch = new Float64Array(srcOf.length);
    this.touched = new Uint32Array(srcOf.length);
  }

  get bytes(): number {
    let tops = 0;
    for (const top of this.tops.values()) tops += top.places.byteLength + top.impacts.byteLength;
    return this.starts.byteLength + this.places.byteLength + this.impacts.byteLength + this.srcOf.byteLength + this.scratch.byteLength + this.touched.byteLength + tops;
  }

  /** The table (`src`) of the row at `place`, without decoding the row's own copy of it. */
  srcAt(place: number): string {
    return this.srcs[this.srcOf[place]!]!;
  }

  /** How many rows hold `stem`: BM25's n, also for rows written since the version (written-rows.ts). */
  holding(stem: string): number {
    const id = this.stemIdOf(stem);
    return id === undefined || id + 1 >= this.starts.length ? 0 : this.starts[id + 1]! - this.starts[id]!;
  }

  /**
   * The best `limit` rows holding any of `stems`, by BM25 (ties in no set order, as the index's); `srcs` narrows the
   * rows to these tables (null: every table of the space); a row flagged in `skip` is passed over (it was changed or
   * deleted since the version: written-rows.ts).
   */
  rank(stems: string[], limit: number, srcs: string[] | null = null, skip: Uint8Array | null = null): PostingsRanking {
    const { scratch: scores, touched, impacts, places, srcOf } = this;
    const allowedSrc = srcs ? new Uint8Array(this.srcs.length) : null;
    if (allowedSrc) for (const src of srcs!) { const at = this.srcs.indexOf(src); if (at >= 0) allowedSrc[at] = 1; }
    const fromTop = stems.length === 1 ? this.rankFromTop(stems[0]!, limit, allowedSrc, skip) : null;
    if (fromTop) return fromTop;
    let count = 0;
    for (const stemmed of stems) {
      const id = this.stemIdOf(stemmed);
      if (id === undefined || id + 1 >= this.starts.length) continue;
      const from = this.starts[id]!;
      const to = this.starts[id + 1]!;
      const holding = to - from;
      if (holding === 0) continue;
      const weight = bm25Weight(this.documents, holding);
      for (let i = from; i < to; i++) {
        const place = places[i]!;
        const before = scores[place]!;
        // Every word's part is above 0, so 0 is a row not touched yet.
        if (before === 0) touched[count++] = place;
        scores[place] = before + weight * impacts[i]!;
      }
    }
    const best = new BestRows(limit);
    for (let i = 0; i < count; i++) {
      const place = touched[i]!;
      if ((!allowedSrc || allowedSrc[srcOf[place]!]) && !(skip && skip[place])) best.offer(place, scores[place]!);
      scores[place] = 0;
    }
    return best.ranked();
  }

  /**
   * One stem's best `limit` rows from its top list, when the list holds that many the search may return: a word's
   * score in a row is its weight times the row's impact, so the rows of most impact are its best. Null otherwise.
   */
  private rankFromTop(stemmed: string, limit: number, allowedSrc: Uint8Array | null, skip: Uint8Array | null): PostingsRanking | null {
    const id = this.stemIdOf(stemmed);
    const top = id === undefined ? undefined : this.tops.get(id);
    if (!top || limit > top.places.length) return null;
    const weight = bm25Weight(this.documents, this.starts[id! + 1]! - this.starts[id!]!);
    const places = new Uint32Array(limit);
    const scores = new Float64Array(limit);
    let found = 0;
    for (let i = 0; i < top.places.length && found < limit; i++) {
      const place = top.places[i]!;
      if ((allowedSrc && !allowedSrc[this.srcOf[place]!]) || (skip && skip[place])) continue;
      places[found] = place;
      scores[found] = weight * top.impacts[i]!;
      found += 1;
    }
    return found === limit ? { places, scores } : null;
  }
}

/** The best `limit` of the rows offered, by score: a min-heap of that size. */
class BestRows {
  private readonly places: Uint32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(private readonly limit: number) {
    this.places = new Uint32Array(Math.max(0, limit));
    this.scores = new Float64Array(Math.max(0, limit));
  }

  offer(place: number, score: number): void {
    if (this.limit <= 0) return;
    if (this.size < this.limit) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.scores[parent]! <= score) break;
        this.places[i] = this.places[parent]!;
        this.scores[i] = this.scores[parent]!;
        i = parent;
      }
      this.places[i] = place;
      this.scores[i] = score;
      return;
    }
    if (score <= this.scores[0]!) return;
    this.siftDown(place, score, this.size);
  }

  /** Places `place` at the root and sifts it down within the first `size` entries. */
  private siftDown(place: number, score: number, size: number): void {
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && this.scores[child + 1]! < this.scores[child]!) child += 1;
      if (this.scores[child]! >= score) break;
      this.places[i] = this.places[child]!;
      this.scores[i] = this.scores[child]!;
      i = child;
    }
    this.places[i] = place;
    this.scores[i] = score;
  }

  ranked(): PostingsRanking {
    const places = new Uint32Array(this.size);
    const scores = new Float64Array(this.size);
    // Pops the least first: the array fills from its end, best first.
    for (let end = this.size; end > 0; end--) {
      places[end - 1] = this.places[0]!;
      scores[end - 1] = this.scores[0]!;
      this.siftDown(this.places[end - 1]!, this.scores[end - 1]!, end - 1);
    }
    this.size = 0;
    return { places, scores };
  }
}

/** Whether the index keeps no such word (longer than `maxTokenBytes` in UTF-8). */
export function tooLong(folded: string, maxTokenBytes: number): boolean {
  return folded.length * 3 > maxTokenBytes && Buffer.byteLength(folded) > maxTokenBytes;
}

/**
 * The postings of a version's rows from their counted words (in the background: other work runs between slices);
 * null when some row's text was counted only in part, so the index's scores could not be told exactly.
 */
export async function buildPostings(
  counted: RowWordsTable,
  rows: { rows: number; value(column: 'text' | 'src', place: number): string | null },
  maxTokenBytes: number,
): Promise<TextPostings | null> {
  const srcs: string[] = [];
  const srcOf = new Uint16Array(rows.rows);
  const { words } = counted;
  const stemCount = words.stems.length;
  const kept = new Uint8Array(words.folded.length);
  for (let id = 0; id < kept.length; id++) kept[id] = tooLong(words.folded[id]!, maxTokenBytes) ? 0 : 1;
  const lengths = new Uint32Array(rows.rows);
  const holding = new Uint32Array(stemCount + 1);
  const lastRow = new Int32Array(stemCount).fill(-1);
  let documents = 0;
  let totalLength = 0;
  const pause = () => new Promise((resolve) => setImmediate(resolve));

  // First pass: each row's length, and how many rows hold each stem.
  for (let place = 0; place < rows.rows; place++) {
    const row = counted.at(place);
    if (row.scale > 1) return null;
    if (row.length > 0 || isTextPresent(rows, place)) documents += 1;
    let length = 0;
    for (let i = 0; i < row.ids.length; i++) {
      const id = row.ids[i]!;
      if (!kept[id]) continue;
      length += row.counts[i]!;
      const stemId = words.stemOf[id]!;
      if (lastRow[stemId] !== place) {
        lastRow[stemId] = place;
        holding[stemId] += 1;
      }
    }
    lengths[place] = length;
    totalLength += length;
    const src = rows.value('src', place) ?? '';
    let srcAt = srcs.indexOf(src);
    if (srcAt < 0) {
      // A space's tables are few; more than 16 bits of them is no space this index is built for.
      if (srcs.length === 0xffff) return null;
      srcAt = srcs.push(src) - 1;
    }
    srcOf[place] = srcAt;
    if (place % BUILD_SLICE_ROWS === BUILD_SLICE_ROWS - 1) await pause();
  }
  const starts = new Uint32Array(stemCount + 1);
  for (let s = 0; s < stemCount; s++) starts[s + 1] = starts[s]! + holding[s]!;
  const places = new Uint32Array(starts[stemCount]!);
  const frequencies = new Uint16Array(starts[stemCount]!);
  // Second pass: each stem's rows, in place order, with the row's count of every word of that stem.
  const next = starts.slice(0, stemCount);
  const slotInRow = new Int32Array(stemCount);
  lastRow.fill(-1);
  for (let place = 0; place < rows.rows; place++) {
    const row = counted.at(place);
    for (let i = 0; i < row.ids.length; i++) {
      const id = row.ids[i]!;
      if (!kept[id]) continue;
      const stemId = words.stemOf[id]!;
      if (lastRow[stemId] !== place) {
        lastRow[stemId] = place;
        const slot = next[stemId]++;
        slotInRow[stemId] = slot;
        places[slot] = place;
        frequencies[slot] = row.counts[i]!;
      } else {
        const slot = slotInRow[stemId]!;
        // A count fits 16 bits: a row counted whole holds at most FEEDBACK_TEXT_CHARS / 2 words.
        frequencies[slot] = Math.min(0xffff, frequencies[slot]! + row.counts[i]!);
      }
    }
    if (place % BUILD_SLICE_ROWS === BUILD_SLICE_ROWS - 1) await pause();
  }
  // Each posting's impact, tf / (tf + K1 (1 - B + B |d| / avgdl)), once the version's average length is known.
  const averageLength = documents > 0 ? totalLength / documents : 1;
  const impacts = new Float32Array(places.length);
  for (let i = 0; i < places.length; i++) {
    const tf = frequencies[i]!;
    impacts[i] = bm25Impact(tf, lengths[places[i]!]!, averageLength);
    if (i % IMPACT_SLICE === IMPACT_SLICE - 1) await pause();
  }
  const tops = new Map<number, TopRows>();
  let offered = 0;
  for (let s = 0; s < stemCount; s++) {
    const from = starts[s]!;
    const to = starts[s + 1]!;
    if (to - from <= TOP_ROWS) continue;
    const best = new BestRows(TOP_ROWS);
    for (let i = from; i < to; i++) best.offer(places[i]!, impacts[i]!);
    const ranked = best.ranked();
    tops.set(s, { places: ranked.places, impacts: Float32Array.from(ranked.scores) });
    if ((offered += to - from) >= IMPACT_SLICE) {
      offered = 0;
      await pause();
    }
  }
  return new TextPostings((stemmed) => words.stemId(stemmed), starts, places, impacts, srcOf, srcs, documents, averageLength, tops);
}

/** Whether a row of no counted words has a text (an empty one, or stop words only): a row to the index all the same. */
function isTextPresent(rows: { value(column: 'text' | 'src', place: number): string | null }, place: number): boolean {
  return rows.value('text', place) !== null;
}
