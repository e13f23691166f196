/**
 * Embedding a semantic or hybrid search's words: one AI request per search, admitted by the caller's AI limit before
 * the model runs; a model that cannot answer makes semantic search unavailable (503), never a failed search of
 * another kind.
 */
import { AppError } from '../errors/app-error.js';
import { EmbeddingError, type EmbeddingProvider } from './provider.js';

export interface QueryEmbedderDeps<Caller> {
  provider: Pick<EmbeddingProvider, 'id' | 'embed'>;
  /** Counts the caller's AI request, or refuses it (429) when its AI limit is spent. */
  admit(caller: Caller): Promise<void>;
}

export class QueryEmbedder<Caller> {
  constructor(private readonly deps: QueryEmbedderDeps<Caller>) {}

  async embed(caller: Caller, text: string): Promise<Float32Array> {
    await this.deps.admit(caller);
    try {
      const [vector] = await this.deps.provider.embed([text], 'query');
      return vector!;
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error;
      throw new AppError('SERVICE_UNAVAILABLE', `Semantic search is unavailable: ${error.message}`, { providerId: this.deps.provider.id });
    }
  }
}
