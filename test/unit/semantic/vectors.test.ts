import { describe, expect, it } from 'vitest';
import { TopK } from '../../../src/semantic/top-k.js';
import { dotRow, fromBlob, normalize, toBlob } from '../../../src/semantic/vectors.js';

const unit = (values: number[]) => normalize(Float32Array.from(values));

describe('vectors', () => {
  it('when normalised, then the vector has unit length and keeps its direction; a zero vector stays zero', () => {
    const v = unit([3, 4]);
    expect(Array.from(v)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(Array.from(unit([0, 0, 0]))).toEqual([0, 0, 0]);
  });

  it('when stored and read back, then the bytes are 4 per dimension and the values are exact', () => {
    const v = unit([1, -2, 3, 0.5, 7]);
    const blob = toBlob(v.subarray(1, 4));
    expect(blob.length).toBe(12);
    // A driver buffer at an odd offset of a larger allocation must still read back.
    const shifted = Buffer.concat([Buffer.from([9]), blob]).subarray(1);
    expect(Array.from(fromBlob(shifted))).toEqual(Array.from(v.subarray(1, 4)));
  });

  it('when a row of a contiguous matrix is scored, then the dot product equals the cosine of unit vectors', () => {
    const rows = [unit([1, 0, 0, 0, 0]), unit([1, 1, 0, 0, 0]), unit([0, 0, 1, 1, 1])];
    const matrix = new Float32Array(rows.length * 5);
    rows.forEach((row, i) => matrix.set(row, i * 5));
    const query = unit([1, 0, 0, 0, 0]);
    expect(dotRow(query, matrix, 0)).toBeCloseTo(1, 6);
    expect(dotRow(query, matrix, 1)).toBeCloseTo(Math.SQRT1_2, 6);
    expect(dotRow(query, matrix, 2)).toBeCloseTo(0, 6);
  });
});

describe('TopK (cosine ranking)', () => {
  it('when more items than k are offered, then the k best come back best first, ties in offer order', () => {
    const top = new TopK<string>(3);
    [['a', 0.1], ['b', 0.9], ['c', 0.5], ['d', 0.9], ['e', 0.7], ['f', -0.2]].forEach(([id, score]) => top.offer(score as number, id as string));
    expect(top.sorted()).toEqual([{ score: 0.9, item: 'b' }, { score: 0.9, item: 'd' }, { score: 0.7, item: 'e' }]);
    expect(top.threshold).toBe(0.7);
  });

  it('when random scores are ranked, then the result equals a full sort', () => {
    const scores = Array.from({ length: 5000 }, (_, i) => Math.sin(i * 12.9898) * 43758.5453 % 1);
    const top = new TopK<number>(25);
    scores.forEach((score, i) => top.offer(score, i));
    const expected = scores.map((score, i) => ({ score, item: i })).sort((a, b) => b.score - a.score || a.item - b.item).slice(0, 25);
    expect(top.sorted()).toEqual(expected);
  });

  it('when k is 0, then nothing is kept', () => {
    const top = new TopK<number>(0);
    top.offer(1, 1);
    expect(top.sorted()).toEqual([]);
  });
});
