/**
 * Embedding models: the public surface of this folder. The search index (src/search-index) embeds rows with
 * them when a table is searched by meaning, and the search service embeds each semantic or hybrid query.
 */
import type { Config } from '../config/config.js';
import { LocalEmbeddingProvider } from './local-provider.js';
import type { EmbeddingProvider } from './provider.js';
import { RemoteEmbeddingProvider } from './remote-provider.js';

export { EmbeddingError, type EmbeddingProvider, type EmbedPriority } from './provider.js';
export { LOCAL_PROVIDER_ID, LocalEmbeddingProvider } from './local-provider.js';
export { RemoteEmbeddingProvider, type RemoteProviderOptions } from './remote-provider.js';
export { QueryEmbedder } from './query-embedder.js';

/** The configured provider: the local model unless EMBEDDINGS_PROVIDER=remote. */
export function createEmbeddingProvider(settings: Config['embeddings']): EmbeddingProvider {
  if (settings.provider === 'remote') {
    return new RemoteEmbeddingProvider({ baseUrl: settings.url!, model: settings.model!, apiKey: settings.apiKey });
  }
  return new LocalEmbeddingProvider();
}
