/**
 * The seam between Quarry and an embedding model. Indexing and search see only this interface; the
 * local model and the remote service are interchangeable behind it.
 */

/** `query` work (one search's query text) goes ahead of queued `bulk` work (indexing batches). */
export type EmbedPriority = 'query' | 'bulk';

export interface EmbeddingProvider {
  /** Provider and model, e.g. `local:universal-sentence-encoder-lite@0.2.0`; stored with every vector it makes. */
  readonly id: string;
  /** Length of its vectors; null until a remote service has answered once. */
  readonly dimensions: number | null;
  /** One unit-length float32 vector per text, in order. */
  embed(texts: string[], priority?: EmbedPriority): Promise<Float32Array[]>;
  /** Frees the model (stops its worker thread). Idempotent; a later embed starts it again. */
  close(): Promise<void>;
}

/** The model or service failed: indexing marks the job failed with it; search answers that the service is down. */
export class EmbeddingError extends Error {
  constructor(message: string, readonly retryable = false) {
    super(message);
    this.name = 'EmbeddingError';
  }
}
