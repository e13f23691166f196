import { describe, expect, it } from 'vitest';
import { firstPossiblePosition, fuse } from '../../../src/search-core/rrf.js';

const list = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${String(i).padStart(3, '0')}`, rank: i + 1 }));

describe('fuse (reciprocal rank fusion)', () => {
  it('when two lists are merged, then score is 1/(60 + rank) and equal ranks alternate by id', () => {
    const merged = fuse([list('b:', 2), list('a:', 2)]);
    expect(merged.map((m) => m.item.id)).toEqual(['a:000', 'b:000', 'a:001', 'b:001']);
    expect(merged[0]!.score).toBeCloseTo(1 / 61, 12);
    expect(merged[2]!.score).toBeCloseTo(1 / 62, 12);
  });

  it('when one id is in several lists, then its contributions add up', () => {
    const merged = fuse([[{ id: 'x', rank: 1 }, { id: 'y', rank: 2 }], [{ id: 'y', rank: 1 }]]);
    expect(merged[0]).toMatchObject({ item: { id: 'y' }, score: 1 / 62 + 1 / 61 });
  });

  it('when lists of different lengths are merged, then the order is total and the same for any input order', () => {
    const lists = [list('a:', 5), list('b:', 40), list('c:', 1)];
    const forward = fuse(lists).map((m) => m.item.id);
    const backward = fuse([...lists].reverse()).map((m) => m.item.id);
    expect(forward).toEqual(backward);
    expect(new Set(forward).size).toBe(46);
  });

  it('when the page window of a list is bounded, then no row below the bound can reach the page', () => {
    for (const lists of [1, 2, 3, 7]) {
      for (const offset of [0, 5, 20, 99, 1000]) {
        const sizes = Array.from({ length: lists }, (_, i) => 30 + 400 * i);
        const merged = fuse(sizes.map((n, i) => list(`${i}:`, n)));
        const bound = firstPossiblePosition(offset, lists);
        for (const { item } of merged.slice(offset, offset + 20)) expect(item.rank - 1).toBeGreaterThanOrEqual(bound);
      }
    }
    expect(firstPossiblePosition(40, 1)).toBe(40);
  });
});
