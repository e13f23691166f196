import { describe, expect, it } from 'vitest';
import { AGREEMENT_DEPTH, agreement, agreementFusion, convexFusion } from '../../../src/search-index/fusion.js';
import type { IndexHit } from '../../../src/search-index/index-store.js';

const hits = (src: string, scored: Array<[string, number]>): IndexHit[] => scored.map(([rid, score]) => ({ rid, src, score }));
const scores = (fused: IndexHit[]) => Object.fromEntries(fused.map((h) => [h.rid, h.score]));

describe('convexFusion (hybrid search)', () => {
  it('when a list is fused alone, then its scores are measured from the lowest it could hold: best 1, the last keeps its share (never 0 for coming last)', () => {
    const fused = convexFusion(hits('t', [['a', 12], ['b', 7], ['c', 2]]), [], 0.25);
    expect(fused.map((h) => h.rid)).toEqual(['a', 'b', 'c']);
    expect(fused[0]!.score).toBeCloseTo(0.75, 12);
    expect(fused[1]!.score).toBeCloseTo(0.75 * (7 / 12), 12);
    expect(fused[2]!.score).toBeCloseTo(0.75 * (2 / 12), 12);
  });

  it('when both lists rank rows, then each row scores (1 - r) * text + r * vector, each from its own floor', () => {
    const text = hits('t', [['a', 9], ['b', 5], ['c', 1]]);
    const vector = hits('t', [['c', 0.9], ['b', 0.7], ['a', 0.4]]);
    const floors = { text: 0, vector: 0.2 };
    const fused = scores(convexFusion(text, vector, 0.25, floors));
    expect(fused.a).toBeCloseTo(0.75 * 1 + 0.25 * (0.2 / 0.7), 12);
    expect(fused.b).toBeCloseTo(0.75 * (5 / 9) + 0.25 * (0.5 / 0.7), 12);
    expect(fused.c).toBeCloseTo(0.75 * (1 / 9) + 0.25 * 1, 12);
    // The weight of meaning decides: at 0.8, the row the vectors like best wins.
    expect(convexFusion(text, vector, 0.8, floors).map((h) => h.rid)).toEqual(['c', 'b', 'a']);
    expect(convexFusion(text, vector, 0.25, floors).map((h) => h.rid)).toEqual(['a', 'b', 'c']);
    // A score at the floor (or below it) adds nothing.
    expect(scores(convexFusion([], hits('t', [['v', 0.9], ['w', 0.2]]), 1, floors)).w).toBe(0);
  });

  it('when a row is in one list only, then it gets that list\'s share alone and keeps its table', () => {
    const fused = convexFusion(hits('t1', [['a', 4], ['b', 2]]), hits('t2', [['z', 0.9], ['a', 0.45]]), 0.25);
    expect(scores(fused)).toEqual({ a: 0.75 + 0.25 * 0.5, z: 0.25, b: 0.75 * 0.5 });
    expect(fused.find((h) => h.rid === 'z')).toEqual({ rid: 'z', src: 't2', score: 0.25 });
    expect(fused.find((h) => h.rid === 'b')!.src).toBe('t1');
  });

  it('when a ranking has no weight, then its rows do not enter the fusion', () => {
    expect(convexFusion(hits('t', [['a', 3]]), hits('t', [['v', 0.9]]), 0).map((h) => h.rid)).toEqual(['a']);
    expect(convexFusion(hits('t', [['a', 3]]), hits('t', [['v', 0.9]]), 1).map((h) => h.rid)).toEqual(['v']);
  });

  it('when every score of a list is equal, then each counts as the best of that list (no division by zero)', () => {
    const fused = convexFusion(hits('t', [['a', 5], ['b', 5]]), [], 0.5);
    expect(fused.map((h) => h.score)).toEqual([0.5, 0.5]);
  });

  it('when fused scores tie, then rows are ordered by id, whatever the input order', () => {
    const forward = convexFusion(hits('t', [['m', 2], ['c', 2], ['x', 1]]), hits('t', [['k', 0.3], ['b', 0.3]]), 0.5);
    expect(forward.map((h) => h.rid)).toEqual(['b', 'c', 'k', 'm', 'x']);
    const backward = convexFusion(hits('t', [['x', 1], ['c', 2], ['m', 2]]), hits('t', [['b', 0.3], ['k', 0.3]]), 0.5);
    expect(backward.map((h) => h.rid)).toEqual(forward.map((h) => h.rid));
  });

  it('when both lists are empty, then nothing comes back', () => {
    expect(convexFusion([], [], 0.25)).toEqual([]);
  });
});

describe('agreement and agreementFusion (hybrid never worse than text)', () => {
  const text = hits('t', [['a', 9], ['b', 7], ['c', 5], ['d', 3]]);

  it('when the vector ranking\'s first page holds some of the text\'s, then the agreement is their share of the shorter page', () => {
    expect(agreement(text, hits('t', [['c', 0.9], ['x', 0.8], ['a', 0.7], ['y', 0.6]]))).toBe(0.5);
    expect(agreement(text, hits('t', [['d', 0.9], ['a', 0.5]]))).toBe(1);
    expect(agreement(text, hits('t', [['x', 0.9]]))).toBe(0);
    expect(agreement([], hits('t', [['x', 0.9]]))).toBe(0);
    // Only the first pages count: a row the vectors rank beyond the page is no agreement.
    const deep = hits('t', Array.from({ length: AGREEMENT_DEPTH }, (_, i): [string, number] => [`v${i}`, 1 - i / 100]).concat([['a', 0.01]]));
    expect(agreement(text, deep)).toBe(0);
  });

  it('when the two rankings share nothing on their first page, then the text ranking stands as it is and rows only meaning found do not enter', () => {
    const weak = hits('t', [['x', 0.99], ['y', 0.98]]);
    expect(agreementFusion(text, weak, 0.9).map((h) => h.rid)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('when the two rankings agree fully, then meaning gets the whole semanticRatio, as the plain convex fusion', () => {
    const same = hits('t', [['d', 0.9], ['c', 0.8], ['b', 0.7], ['a', 0.6]]);
    expect(agreementFusion(text, same, 0.8)).toEqual(convexFusion(text, same, 0.8));
  });

  it('when they agree in part, then meaning weighs semanticRatio times the agreement', () => {
    const half = hits('t', [['d', 0.9], ['x', 0.8], ['c', 0.7], ['y', 0.6]]);
    expect(agreementFusion(text, half, 0.8)).toEqual(convexFusion(text, half, 0.4));
  });

  it('when there is no text ranking, then the vector ranking stands alone at its weight', () => {
    const vector = hits('t', [['x', 0.9], ['y', 0.5]]);
    expect(agreementFusion([], vector, 1)).toEqual(convexFusion([], vector, 1));
  });
});
