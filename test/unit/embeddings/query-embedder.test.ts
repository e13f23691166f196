/** A semantic search's words embedded: the caller's AI request is counted first, and a model that fails is a 503. */
import { describe, expect, it } from 'vitest';
import { EmbeddingError } from '../../../src/embeddings/index.js';
import { QueryEmbedder } from '../../../src/embeddings/query-embedder.js';
import { AppError } from '../../../src/errors/app-error.js';

function embedder(embed: (texts: string[]) => Promise<Float32Array[]>, admit: (caller: string) => Promise<void> = async () => undefined) {
  const steps: string[] = [];
  const queries = new QueryEmbedder<string>({
    provider: { id: 'fake:hash-8', embed: async (texts, priority) => { steps.push(`embed ${texts.join()} (${priority})`); return embed(texts); } },
    admit: async (caller) => { steps.push(`admit ${caller}`); await admit(caller); },
  });
  return { queries, steps };
}

describe('QueryEmbedder', () => {
  it('when a search is embedded, then the AI request is admitted before the model runs, at query priority', async () => {
    const vector = new Float32Array([1, 0]);
    const { queries, steps } = embedder(async () => [vector]);
    expect(await queries.embed('key_1', 'red shoes')).toBe(vector);
    expect(steps).toEqual(['admit key_1', 'embed red shoes (query)']);
  });

  it('when the AI limit refuses the request, then the model never runs', async () => {
    const refused = new AppError('RATE_LIMIT_EXCEEDED', 'AI requests spent', {});
    const { queries, steps } = embedder(async () => [new Float32Array(2)], async () => { throw refused; });
    await expect(queries.embed('key_1', 'red shoes')).rejects.toBe(refused);
    expect(steps).toEqual(['admit key_1']);
  });

  it('when the model fails, then semantic search is unavailable (503) and names the model; another failure is passed on', async () => {
    const down = embedder(async () => { throw new EmbeddingError('model not loaded'); }).queries;
    await expect(down.embed('key_1', 'red shoes')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { providerId: 'fake:hash-8' } });
    const bug = new TypeError('broken');
    await expect(embedder(async () => { throw bug; }).queries.embed('key_1', 'red shoes')).rejects.toBe(bug);
  });
});
