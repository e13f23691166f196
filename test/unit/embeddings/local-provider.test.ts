/** The real local model on its worker thread (loaded once for this file; about a second). */
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_PROVIDER_ID, LocalEmbeddingProvider } from '../../../src/embeddings/index.js';

/** Real store, real model or worker thread: allow for a loaded machine (the projects' default is 5 s). */
const SLOW = 30_000;

const provider = new LocalEmbeddingProvider({ chunkSize: 4 });
afterAll(() => provider.close());

/** Unit vectors: the dot product is the cosine. */
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe('LocalEmbeddingProvider', () => {
  it('when texts are embedded, then each gets a 512-dimensional unit vector, and paraphrases are closer than unrelated text', async () => {
    const [chair, seat, bananas] = await provider.embed(['an ergonomic office chair', 'comfortable desk seating', 'ripe bananas from the market']);
    expect(provider.id).toBe(LOCAL_PROVIDER_ID);
    for (const v of [chair, seat, bananas]) {
      expect(v).toHaveLength(512);
      expect(cosine(v, v)).toBeCloseTo(1, 4);
    }
    expect(cosine(chair, seat)).toBeGreaterThan(cosine(chair, bananas) + 0.2);
  }, SLOW);

  it('when a query arrives behind queued indexing work, then it is answered before that work, and the event loop keeps turning', async () => {
    const finished: string[] = [];
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const bulk = provider.embed(Array.from({ length: 40 }, (_, i) => `a long row of text number ${i} about gardens, weather and rivers`), 'bulk').then(() => finished.push('bulk'));
    const query = provider.embed(['where is the river'], 'query').then(() => finished.push('query'));
    await Promise.all([bulk, query]);
    clearInterval(timer);
    expect(finished).toEqual(['query', 'bulk']);
    expect(ticks).toBeGreaterThan(5);
  }, SLOW);

  it('when closed, then pending work is refused, and a later embed starts the model again', async () => {
    const refused = expect(provider.embed(['soon stopped'])).rejects.toThrow('stopped');
    await provider.close();
    await refused;
    expect(await provider.embed(['back again'])).toHaveLength(1);
  }, SLOW);
});
