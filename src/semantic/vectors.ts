/**
 * Vector arithmetic and the storage format. Every vector Quarry stores or compares is float32 of unit length, so
 * cosine similarity is a plain dot product. Stored as little-endian float32 bytes (BLOB / bytea).
 */

/** Scales a vector to unit length in place; a zero vector stays zero. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i += 1) sum += vector[i] * vector[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i += 1) vector[i] /= norm;
  return vector;
}

/** The bytes stored for a vector (a copy, little-endian on every platform Node supports). */
export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
}

/** A stored vector back as float32 (copied: driver buffers need not be 4-byte aligned). */
export function fromBlob(blob: Buffer): Float32Array {
  const vector = new Float32Array(blob.length / 4);
  new Uint8Array(vector.buffer).set(blob);
  return vector;
}

/** Dot product of `query` with row `row` of a contiguous row-major matrix of `query.length` columns. */
export function dotRow(query: Float32Array, matrix: Float32Array, row: number): number {
  const dims = query.length;
  let offset = row * dims;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  // Four accumulators let the engine overlap the multiply-adds.
  for (; i + 3 < dims; i += 4, offset += 4) {
    a += query[i] * matrix[offset];
    b += query[i + 1] * matrix[offset + 1];
    c += query[i + 2] * matrix[offset + 2];
    d += query[i + 3] * matrix[offset + 3];
  }
  for (; i < dims; i += 1, offset += 1) a += query[i] * matrix[offset];
  return a + b + c + d;
}
