import { describe, expect, it } from 'vitest';
import { normalize } from '../../../src/embeddings/vectors.js';

const unit = (values: number[]) => normalize(Float32Array.from(values));

describe('normalize', () => {
  it('when normalised, then the vector has unit length and keeps its direction; a zero vector stays zero', () => {
    const v = unit([3, 4]);
    expect(Array.from(v)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(Array.from(unit([0, 0, 0]))).toEqual([0, 0, 0]);
  });
});
