/** When rows written by polls and streams are folded into their space's indexes: by a share of the space or by age. */
import { describe, expect, it, vi } from 'vitest';
import {
  FOLD_EVERY_MS, FOLD_MAX_ROWS, FOLD_MIN_ROWS, FOLD_QUIET_MS, FoldSchedule, foldDueAt,
} from '../../../src/search-index/changes/fold-schedule.js';

function space(rows: number) {
  return { countRows: vi.fn(async () => rows), optimize: vi.fn(async () => undefined) };
}

describe('foldDueAt', () => {
  it('is a tenth of the space, at least FOLD_MIN_ROWS and at most FOLD_MAX_ROWS', () => {
    expect(foldDueAt(0)).toBe(FOLD_MIN_ROWS);
    expect(foldDueAt(5_000)).toBe(FOLD_MIN_ROWS);
    expect(foldDueAt(100_000)).toBe(10_000);
    expect(foldDueAt(87_654)).toBe(8_766);
    expect(foldDueAt(10_000_000)).toBe(FOLD_MAX_ROWS);
  });
});

describe('FoldSchedule', () => {
  it('folds a small space once FOLD_MIN_ROWS rows wait, then counts again from none', async () => {
    const folds = new FoldSchedule(() => 0);
    const docs = space(1_000);
    await folds.wrote('docs', docs, FOLD_MIN_ROWS - 1);
    expect(docs.optimize).not.toHaveBeenCalled();
    await folds.wrote('docs', docs, 1);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    await folds.wrote('docs', docs, FOLD_MIN_ROWS - 1);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
  });

  it('lets a tenth of a larger space wait before folding it, and counts its rows once per fold', async () => {
    const folds = new FoldSchedule(() => 0);
    const docs = space(100_000);
    // A stream's batches of 100 rows: 99 of them leave the space unfolded, the hundredth folds it.
    for (let batch = 0; batch < 99; batch += 1) await folds.wrote('docs', docs, 100);
    expect(docs.optimize).not.toHaveBeenCalled();
    await folds.wrote('docs', docs, 100);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    expect(docs.countRows).toHaveBeenCalledTimes(1);
    await folds.wrote('docs', docs, FOLD_MIN_ROWS);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    expect(docs.countRows).toHaveBeenCalledTimes(2);
  });

  it('folds a very large space at FOLD_MAX_ROWS, however small a share of it that is', async () => {
    const folds = new FoldSchedule(() => 0);
    const docs = space(50_000_000);
    await folds.wrote('docs', docs, FOLD_MAX_ROWS - 1);
    expect(docs.optimize).not.toHaveBeenCalled();
    await folds.wrote('docs', docs, 1);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
  });

  it('folds a few rows once the first of them has waited FOLD_EVERY_MS, even when no more are written', async () => {
    let now = 1_000;
    const folds = new FoldSchedule(() => now);
    const docs = space(100_000);
    await folds.wrote('docs', docs, 3);
    now += FOLD_EVERY_MS - 1;
    await folds.wrote('docs', docs, 0);
    expect(docs.optimize).not.toHaveBeenCalled();
    now += 1;
    await folds.wrote('docs', docs, 0);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    expect(docs.countRows).not.toHaveBeenCalled();
  });

  it('does nothing for a space with no rows waiting, and counts each space on its own', async () => {
    let now = 0;
    const folds = new FoldSchedule(() => now);
    const docs = space(1_000);
    const notes = space(1_000);
    now += FOLD_EVERY_MS * 2;
    await folds.wrote('docs', docs, 0);
    await folds.wrote('notes', notes, FOLD_MIN_ROWS - 1);
    await folds.wrote('docs', docs, 1);
    expect(docs.optimize).not.toHaveBeenCalled();
    expect(notes.optimize).not.toHaveBeenCalled();
  });

  it('folds a space no rows were written to for FOLD_QUIET_MS, and no other', async () => {
    let now = 0;
    const folds = new FoldSchedule(() => now);
    const quiet = space(100_000);
    const busy = space(100_000);
    await folds.wrote('quiet', quiet, 500);
    for (let second = 0; second < FOLD_QUIET_MS / 1000; second += 1) {
      now += 1000;
      await folds.wrote('busy', busy, 100);
      await folds.foldQuiet();
    }
    expect(quiet.optimize).toHaveBeenCalledTimes(1);
    expect(busy.optimize).not.toHaveBeenCalled();
    // Folded: nothing waits in it any more, and a poll that found nothing does not make it wait again.
    await folds.wrote('quiet', quiet, 0);
    now += FOLD_QUIET_MS;
    await folds.foldQuiet();
    expect(quiet.optimize).toHaveBeenCalledTimes(1);
  });

  it('does not fold a space twice when it is folded quietly while a write counts its rows', async () => {
    let now = 0;
    const folds = new FoldSchedule(() => now);
    let counted!: () => void;
    const docs = { countRows: vi.fn(() => new Promise<number>((resolve) => (counted = () => resolve(1_000)))), optimize: vi.fn(async () => undefined) };
    // Enough rows to ask the space's size; while it is asked, the space has been quiet long enough.
    const writing = folds.wrote('docs', docs, FOLD_MIN_ROWS);
    now += FOLD_QUIET_MS;
    await folds.foldQuiet();
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    counted();
    await writing;
    expect(docs.optimize).toHaveBeenCalledTimes(1);
  });
});
