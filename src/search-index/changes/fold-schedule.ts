import { REREAD_SHARE } from '../written-rows.js';

/**
 * When rows written by polls and streams are folded into their space's indexes (`optimize`). Until then a natural
 * search ranks them from memory beside the postings (written-rows.ts), and the searches LanceDB answers (filters,
 * required or excluded words, typos) find them by a scan of their text. A fold rewrites the whole space in LanceDB
 * 0.31 (docs/decisions.md), and a stream's writes wait behind it: at 2,000 rows a fold, a 100,000-row space under
 * 200 changes/s was folding half of the time. So a fold is due once the rows waiting are a share of the space, the
 * share at which its rows are read again (REREAD_SHARE), so that its cost per change is the same at any size
 * (a merge policy's rule), and never below FOLD_MIN_ROWS (a small space's scan costs nothing).
 */
export const FOLD_MIN_ROWS = 2000;
export const FOLD_SHARE = REREAD_SHARE;
/**
 * Never above this many rows, whatever the space's size: the searches LanceDB answers scan each row not folded in
 * (about 30 µs a row, docs/benchmarks.md), so this bounds what they pay just before a fold to a few hundred ms.
 */
export const FOLD_MAX_ROWS = 10_000;
/** Rows that waited this long are folded at the next write or poll however few they are. */
export const FOLD_EVERY_MS = 300_000;
/**
 * A space no rows were written to for this long is folded (foldQuiet), however few wait: once a stream's load
 * stops, the searches LanceDB answers stop paying for its last rows. A stream under load writes every second or so,
 * so this never folds it; a poll slower than this folds at most once an interval.
 */
export const FOLD_QUIET_MS = 30_000;

/** The rows waiting in a space before a fold is due, for a space of `rows` rows. */
export function foldDueAt(rows: number): number {
  return Math.min(FOLD_MAX_ROWS, Math.max(FOLD_MIN_ROWS, Math.ceil(FOLD_SHARE * rows)));
}

/** What a fold needs of a space: its size, once per fold, and the fold. */
export interface FoldableSpace {
  countRows(): Promise<number>;
  optimize(): Promise<unknown>;
}

/** Per space, the rows written that its indexes do not hold yet, since when, and how many make a fold due. */
export class FoldSchedule {
  private readonly unfolded = new Map<string, { rows: number; since: number; last: number; dueAt: number | null; indexed: FoldableSpace }>();

  constructor(private readonly now: () => number) {}

  /**
   * `written` more rows of `space` wait (none: a space with rows waiting may still be due by time); they are folded
   * in once foldDueAt(the space's rows) wait, or the first has waited FOLD_EVERY_MS.
   */
  async wrote(space: string, indexed: FoldableSpace, written: number): Promise<void> {
    const now = this.now();
    if (written === 0 && !this.unfolded.has(space)) return;
    const pending = this.unfolded.get(space) ?? { rows: 0, since: now, last: now, dueAt: null, indexed };
    pending.rows += written;
    if (written > 0) pending.last = now;
    pending.indexed = indexed;
    this.unfolded.set(space, pending);
    if (now - pending.since < FOLD_EVERY_MS) {
      if (pending.rows < FOLD_MIN_ROWS) return;
      // Counted once a fold: the space's size moves by a share at most until then.
      pending.dueAt ??= foldDueAt(await indexed.countRows());
      // Folded meanwhile (foldQuiet), or not due yet.
      if (this.unfolded.get(space) !== pending || pending.rows < pending.dueAt) return;
    }
    this.unfolded.delete(space);
    await indexed.optimize();
  }

  /** Folds every space with rows waiting and none written for FOLD_QUIET_MS, one after the other. */
  async foldQuiet(): Promise<void> {
    for (const [space, pending] of [...this.unfolded]) {
      if (this.now() - pending.last < FOLD_QUIET_MS || this.unfolded.get(space) !== pending) continue;
      this.unfolded.delete(space);
      await pending.indexed.optimize();
    }
  }
}
