/** merge: one page from every engine's lists (reciprocal rank fusion unless one scored list stands alone). */
import { describe, expect, it } from 'vitest';
import type { EngineHit, Ranking } from '../../../../src/search-core/engine.js';
import { merge } from '../../../../src/services/search/search-merge.js';

const hits = (engine: string, ids: string[], score = 10): Array<EngineHit<null>> =>
  ids.map((id, i) => ({ id, rank: i + 1, score: score - i, databaseId: 'db_1', engine, ref: null }));

const ranking = (lists: Array<Array<EngineHit<null>>>, scored: boolean, total = lists.flat().length): Ranking<null> => ({
  lists, scored, total, totalIsEstimate: false, databases: new Map(), tables: [], corrections: [], facets: {}, facetsAreEstimate: false,
});

describe('merge', () => {
  it('when only the scored list answers, then it stands alone with its own scores and is not approximate', () => {
    const answer = merge([ranking([hits('index', ['a', 'b', 'c'])], true), ranking([], false)], 1, 2);
    expect(answer.page.map((p) => [p.item.id, p.score])).toEqual([['b', 9], ['c', 8]]);
    expect(answer.approximate).toBe(false);
    expect(answer.total).toBe(3);
  });

  it('when one unscored list answers alone, then its order is kept by rank fusion and the answer is not approximate', () => {
    const answer = merge([ranking([], true), ranking([hits('live', ['x', 'y'])], false)], 0, 5);
    expect(answer.page.map((p) => p.item.id)).toEqual(['x', 'y']);
    expect(answer.page[0]!.score).toBeCloseTo(1 / 61);
    expect(answer.approximate).toBe(false);
  });

  it('when two lists answer, then they are interleaved by rank, ties by id, and the answer says it is approximate', () => {
    const answer = merge([ranking([hits('index', ['i1', 'i2'])], true), ranking([hits('live', ['l1', 'l2'])], false)], 0, 4);
    expect(answer.page.map((p) => p.item.id)).toEqual(['i1', 'l1', 'i2', 'l2']);
    expect(answer.approximate).toBe(true);
  });

  it('when a row is in two lists, then it is one result whose score adds both ranks', () => {
    const answer = merge([ranking([hits('live', ['a', 'b'])], false), ranking([hits('live', ['b', 'c'])], false)], 0, 3);
    expect(answer.page[0]!.item.id).toBe('b');
    expect(answer.page[0]!.score).toBeCloseTo(1 / 62 + 1 / 61);
  });

  it('when totals are estimates somewhere, then the merged total adds them and says it is an estimate', () => {
    const estimated = { ...ranking([], true, 40), totalIsEstimate: true };
    const answer = merge([estimated, ranking([hits('live', ['x'])], false, 2)], 0, 10);
    expect(answer.total).toBe(42);
    expect(answer.totalIsEstimate).toBe(true);
  });

  it('when nothing answers, then the page is empty', () => {
    expect(merge([ranking([], true, 0), ranking([], false, 0)], 0, 10)).toEqual({ page: [], total: 0, totalIsEstimate: false, approximate: false });
  });
});
