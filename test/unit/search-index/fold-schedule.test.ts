/** When rows written by polls and streams are folded into their space's indexes: by count or by age, per space. */
import { describe, expect, it, vi } from 'vitest';
import { FOLD_EVERY_MS, FOLD_EVERY_ROWS, FoldSchedule } from '../../../src/search-index/changes/fold-schedule.js';

function space() {
  return { optimize: vi.fn(async () => undefined) };
}

describe('FoldSchedule', () => {
  it('folds once FOLD_EVERY_ROWS rows of a space wait, then counts again from none', async () => {
    const folds = new FoldSchedule(() => 0);
    const docs = space();
    await folds.wrote('docs', docs, FOLD_EVERY_ROWS - 1);
    expect(docs.optimize).not.toHaveBeenCalled();
    await folds.wrote('docs', docs, 1);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
    await folds.wrote('docs', docs, FOLD_EVERY_ROWS - 1);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
  });

  it('folds a few rows once the first of them has waited FOLD_EVERY_MS, even when no more are written', async () => {
    let now = 1_000;
    const folds = new FoldSchedule(() => now);
    const docs = space();
    await folds.wrote('docs', docs, 3);
    now += FOLD_EVERY_MS - 1;
    await folds.wrote('docs', docs, 0);
    expect(docs.optimize).not.toHaveBeenCalled();
    now += 1;
    await folds.wrote('docs', docs, 0);
    expect(docs.optimize).toHaveBeenCalledTimes(1);
  });

  it('does nothing for a space with no rows waiting, and counts each space on its own', async () => {
    let now = 0;
    const folds = new FoldSchedule(() => now);
    const docs = space();
    const notes = space();
    now += FOLD_EVERY_MS * 2;
    await folds.wrote('docs', docs, 0);
    await folds.wrote('notes', notes, FOLD_EVERY_ROWS - 1);
    await folds.wrote('docs', docs, 1);
    expect(docs.optimize).not.toHaveBeenCalled();
    expect(notes.optimize).not.toHaveBeenCalled();
  });
});
