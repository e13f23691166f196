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

interface Written {
  /** The version the write that made this change went to. */
  version: number;
  rid: string;
  /** Null: the row was deleted. */
  row: WrittenRow | null;
  /** The row's stems and how often each occurs, and its length in words the index keeps (BM25's tf and |d|). */
  terms: Map<string, number>;
  length: number;
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
  private byStem = new Map<string, Written[]>();
  /** The last mask made, for the postings' rows it was made for and the changes it took in. */
  private mask: { rows: VersionRows; changes: number; skip: Uint8Array } | null = null;

  /** The chain of known changes covers every change from `base` to `current`. */
  covers(base: number, current: number): boolean {
    return this.from !== null && this.from <= base && this.at === current;
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
    for (const row of rows) {
      const kept: WrittenRow = { rid: row.rid, src: row.src, pk: row.pk, fields: row.fields, text: row.text, head: row.head };
      this.add({ version: after, rid: row.rid, row: kept, ...counted(row.text) });
      this.chars += row.text.length;
    }
    for (const rid of deleted) this.add({ version: after, rid, row: null, terms: new Map(), length: 0 });
    this.at = after;
    if (this.changes.length > WRITTEN_ROWS_MAX || this.chars > WRITTEN_CHARS_MAX) this.restart(after);
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
    const scores = new Map<Written, number>();
    for (const stem of stems) {
      const holding = this.byStem.get(stem);
      if (!holding) continue;
      const weight = bm25Weight(statistics.documents, statistics.holding(stem));
      for (const change of holding) {
        if (this.latest.get(change.rid) !== change || !change.row || (allowed && !allowed.has(change.row.src))) continue;
        const tf = change.terms.get(stem)!;
        scores.set(change, (scores.get(change) ?? 0) + weight * bm25Impact(tf, change.length, statistics.averageLength));
      }
    }
    const hits = [...scores].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([change, score]) => ({ score, row: change.row! }));
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
    this.changes.push(change);
    this.latest.set(change.rid, change);
    for (const stem of change.terms.keys()) {
      const holding = this.byStem.get(stem);
      if (holding) holding.push(change);
      else this.byStem.set(stem, [change]);
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
