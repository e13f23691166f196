/**
 * The rows this process wrote to a space since the version whose postings it holds (postings.ts): a small segment
 * in memory beside them, as Lucene's and Sphinx's near-real-time readers keep one, so that a search of a space being
 * written (a stream's batch every half second) still ranks in memory. Without it, every such search asked LanceDB,
 * which finds the rows not yet folded into its text index by a scan of their text, about 30 µs per row per query
 * (docs/benchmarks.md): hundreds of milliseconds under a steady write load.
 *
 * A search of version W with postings of an older version V ranks:
 * - the postings of V, without the rows written or deleted since (their places masked);
 * - the rows written since, each scored here by BM25 with V's statistics (n of each word, N, the average length):
 *   so a row scores as it would among V's rows, as a new segment's rows do in Lucene until a merge.
 * That is exact only when every change from V to W is known here: each write of this process records the versions
 * it went from and to, and a change it cannot tell (another process wrote, a write failed half-way, columns changed,
 * whole tables dropped) breaks the chain: the searches then ask LanceDB until postings of a later version are built.
 */
import { MAX_TOKEN_BYTES, stemOfFolded } from './analyzer.js';
import { bm25Impact, bm25Weight, tooLong } from './postings.js';
import { bestOf } from './best-of.js';
import { eachFoldedWord, FEEDBACK_TEXT_CHARS } from './row-words.js';
import { isFoldedStopWord } from '../search-core/stop-words.js';
import type { VersionRows } from './row-cache.js';

/** What a search reads of a row written since the postings' version. */
export interface WrittenRow {
  rid: string;
  src: string;
  pk: string;
  fields: string;
  text: string;
  head: string;
}

/** The rows kept at most: past them the chain is broken (the searches ask LanceDB until the postings catch up). */
export const WRITTEN_ROWS_MAX = 50_000;
/** Characters of their texts kept at most, for the same reason. */
export const WRITTEN_CHARS_MAX = 32 * 1024 * 1024;

/**
 * The share of a version's rows that the changes since may reach before its rows, postings and words are read and
 * built again for the current version. Reading them costs the whole space (seconds of CPU at 100,000 rows) however
 * little changed, and under a stream's writes it ran again and again, competing with the searches and the writes;
 * the rows written since cost each search in proportion to their number, and they are scored with the statistics of
 * the version (a tenth more rows moves them little). So the space is read again once they are a set share of it, as
 * a merge policy merges a segment once it is a set share of the index (Lucene's TieredMergePolicy): the cost per change
 * stays the same whatever the space's size, and a small space (an empty one) is read again after its first writes.
 */
export const REREAD_SHARE = 0.1;

/**
 * Whether a write of `changes` rows is worth recording beside postings of `baseRows` rows: not when it alone reaches
 * the share that has the space read again (any write to an empty space). Its rows would rank from memory only until
 * that read ends, and recording them counts every word of each on the writer's thread, in one go: a first sync's
 * appends of 20,000 rows held it about 1.7 s each, 8.8 s of a 100,000-row sync's 12 s of reading and writing
 * (docs/benchmarks.md). The chain breaks instead, and the searches ask LanceDB until the read ends.
 */
export function worthRecording(changes: number, baseRows: number): boolean {
  return changes < REREAD_SHARE * baseRows;
}

interface Written {
  /** The version the write that made this change went to. */
  version: number;
  rid: string;
  /** Null: the row was deleted. */
  row: WrittenRow | null;
  /** The row's stems and how often each occurs, and its length in words the index keeps (BM25's tf and |d|). */
  terms: Map<string, number>;
  length: number;
  /** No later change of the same rid was recorded (else this one no longer ranks). */
  live?: boolean;
}

/** The changes that hold a stem, by their place in the chain, with how often each holds it. */
interface Holding {
  places: number[];
  tfs: number[];
}

/** A row written since, as ranked: its text's score, and the row. */
export interface WrittenHit {
  score: number;
  row: WrittenRow;
}

/** BM25's statistics of the postings' version, which the rows written since are scored with. */
export interface PostingsStatistics {
  documents: number;
  averageLength: number;
  holding(stem: string): number;
}

export class WrittenSince {
  /** Every change after this version is here (null: nothing is known). */
  private from: number | null = null;
  /** The version the last recorded write went to. */
  private at: number | null = null;
  private changes: Written[] = [];
  private chars = 0;
  /** The last change of each rid, and the changes that hold each stem. */
  private latest = new Map<string, Written>();
  private byStem = new Map<string, Holding>();
  /** A score per change, all 0 between two searches (one search fills and clears it within one synchronous call). */
  private scratch = new Float64Array(0);
  /** The last mask made, for the postings' rows it was made for and the changes it took in. */
  private mask: { rows: VersionRows; changes: number; skip: Uint8Array } | null = null;

  /** The chain of known changes covers every change from `base` to `current`. */
  covers(base: number, current: number): boolean {
    return this.from !== null && this.from <= base && this.at === current;
  }

  /**
   * Whether every change from `base` (a version of `rows` rows) to `current` is known here and they are still few
   * (REREAD_SHARE): the space need not be read again for `current`, its searches rank the rows written since.
   */
  fewSince(base: number, current: number, rows: number): boolean {
    return this.covers(base, current) && this.changesAfter(base) < REREAD_SHARE * rows;
  }

  /** The changes recorded after `version` (they are in the order written: the first after it is found by halving). */
  private changesAfter(version: number): number {
    let low = 0;
    let high = this.changes.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.changes[middle]!.version > version) high = middle;
      else low = middle + 1;
    }
    return this.changes.length - low;
  }

  /** A write of this process took the space from `before` to `after`: these rows written, these rids deleted. */
  wrote(before: number, after: number, rows: ReadonlyArray<WrittenRow>, deleted: readonly string[]): void {
    // A text longer than the postings count whole leaves its version to LanceDB there (postings.ts), and counting it
    // here would hold the writer's thread for a long row: such a row breaks the chain instead.
    if (rows.some((row) => row.text.length > FEEDBACK_TEXT_CHARS)) {
      this.restart(after);
      return;
    }
    if (this.at !== before) this.restart(before);
    // More than it keeps: let go before counting their words, not after.
    const chars = rows.reduce((sum, row) => sum + row.text.length, 0);
    if (this.changes.length + rows.length + deleted.length > WRITTEN_ROWS_MAX || this.chars + chars > WRITTEN_CHARS_MAX) {
      this.restart(after);
      return;
    }
    for (const row of rows) {
      const kept: WrittenRow = { rid: row.rid, src: row.src, pk: row.pk, fields: row.fields, text: row.text, head: row.head };
      this.add({ version: after, rid: row.rid, row: kept, ...counted(row.text) });
    }
    this.chars += chars;
    for (const rid of deleted) this.add({ version: after, rid, row: null, terms: new Map(), length: 0 });
    this.at = after;
  }

  /** A write that changed no row (a fold, a compaction) took the space from `before` to `after`. */
  kept(before: number, after: number): void {
    if (this.at === before) this.at = after;
    else this.restart(after);
  }

  /** A change that cannot be told row by row: only postings of `after` or later rank the space (null: unknown). */
  lost(after: number | null): void {
    this.restart(after);
  }

  /**
   * The best `limit` rows written after `base` holding any of `stems`, in these tables (null: all), scored with the
   * base's statistics; and, per place of the base's rows, whether it was written or deleted since (`skip`). Call it
   * only when `covers(base.version, current)`.
   */
  rank(base: VersionRows, statistics: PostingsStatistics, stems: string[], limit: number, srcs: string[] | null): { hits: WrittenHit[]; skip: Uint8Array | null } {
    this.drop(base.version);
    const allowed = srcs ? new Set(srcs) : null;
    // Summed per change in a typed array, the changes touched kept in order: an 8-word query over 10,000 rows
    // written since touched some 20,000 holdings, and a map per change and a sort of them all took 16 ms a search.
    if (this.scratch.length < this.changes.length) this.scratch = new Float64Array(Math.max(this.changes.length, 2 * this.scratch.length));
    const scores = this.scratch;
    const touched: number[] = [];
    for (const stem of stems) {
      const holding = this.byStem.get(stem);
      if (!holding) continue;
      const weight = bm25Weight(statistics.documents, statistics.holding(stem));
      const { places, tfs } = holding;
      for (let i = 0; i < places.length; i++) {
        const place = places[i]!;
        const change = this.changes[place]!;
        if (!change.live || !change.row) continue;
        if (scores[place] === 0) touched.push(place);
        scores[place] += weight * bm25Impact(tfs[i]!, change.length, statistics.averageLength);
      }
    }
    // The best `limit`, best first, ties in the order first touched (as a stable sort of them all would give).
    const inTables = allowed ? touched.filter((place) => allowed.has(this.changes[place]!.row!.src)) : touched;
    const best = bestOf(inTables, limit, (a, b) => scores[b]! - scores[a]!);
    const hits = best.map((place) => ({ score: scores[place]!, row: this.changes[place]!.row! }));
    for (const place of touched) scores[place] = 0;
    return { hits, skip: this.skipOf(base) };
  }

  /** The base's places whose rows were written or deleted since; null when none. */
  private skipOf(base: VersionRows): Uint8Array | null {
    if (this.latest.size === 0) return null;
    if (this.mask?.rows === base && this.mask.changes === this.changes.length) return this.mask.skip;
    const skip = new Uint8Array(base.rows);
    for (const rid of this.latest.keys()) {
      const place = base.ridPlaces?.get(rid);
      if (place !== undefined) skip[place] = 1;
    }
    this.mask = { rows: base, changes: this.changes.length, skip };
    return skip;
  }

  /** Drops the changes that `version` holds already (its postings are built). */
  drop(version: number): void {
    if (this.from === null || version <= this.from) return;
    const after = this.changes.filter((change) => change.version > version);
    const at = this.at;
    this.restart(version);
    this.at = at;
    for (const change of after) {
      this.add(change);
      this.chars += change.row?.text.length ?? 0;
    }
  }

  private restart(from: number | null): void {
    this.from = from;
    this.at = from;
    this.changes = [];
    this.chars = 0;
    this.latest = new Map();
    this.byStem = new Map();
    this.mask = null;
  }

  private add(change: Written): void {
    const place = this.changes.push(change) - 1;
    const before = this.latest.get(change.rid);
    if (before) before.live = false;
    change.live = true;
    this.latest.set(change.rid, change);
    for (const [stem, tf] of change.terms) {
      const holding = this.byStem.get(stem);
      if (holding) {
        holding.places.push(place);
        holding.tfs.push(tf);
      } else {
        this.byStem.set(stem, { places: [place], tfs: [tf] });
      }
    }
  }

}

/** A text's stems with how often each occurs, and its length, as the postings count them (postings.ts). */
function counted(text: string): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>();
  let length = 0;
  eachFoldedWord(text, (folded) => {
    if (isFoldedStopWord(folded) || tooLong(folded, MAX_TOKEN_BYTES)) return;
    length += 1;
    const stem = stemOfFolded(folded);
    terms.set(stem, (terms.get(stem) ?? 0) + 1);
  });
  return { terms, length };
}
