/**
 * Rows written by polls and streams, or seconds since the first of them, before their space's indexes take them in:
 * until then every search reads them by a scan of their text (slower with each row), and folding them in costs a
 * pass over the index, so neither after every write nor only on the cleanup schedule.
 */
export const FOLD_EVERY_ROWS = 2000;
export const FOLD_EVERY_MS = 30_000;

/** Per space, the rows written that its indexes do not hold yet, and since when; folds them in when due. */
export class FoldSchedule {
  private readonly unfolded = new Map<string, { rows: number; since: number }>();

  constructor(private readonly now: () => number) {}

  /**
   * `written` more rows of `space` wait (none: a space with rows waiting may still be due by time); they are folded
   * in (`optimize`) once FOLD_EVERY_ROWS wait or the first has waited FOLD_EVERY_MS.
   */
  async wrote(space: string, indexed: { optimize(): Promise<unknown> }, written: number): Promise<void> {
    const now = this.now();
    if (written === 0 && !this.unfolded.has(space)) return;
    const pending = this.unfolded.get(space) ?? { rows: 0, since: now };
    pending.rows += written;
    this.unfolded.set(space, pending);
    if (pending.rows < FOLD_EVERY_ROWS && now - pending.since < FOLD_EVERY_MS) return;
    this.unfolded.delete(space);
    await indexed.optimize();
  }
}
