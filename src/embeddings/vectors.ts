/** Every vector Quarry embeds is float32 of unit length, so the index's cosine distance compares directions only. */

/** Scales a vector to unit length in place; a zero vector stays zero. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i += 1) sum += vector[i] * vector[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i += 1) vector[i] /= norm;
  return vector;
}
