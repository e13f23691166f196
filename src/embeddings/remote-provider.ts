/**
 * Any OpenAI-compatible embeddings service: `POST {EMBEDDINGS_URL}/embeddings` with `{ model, input: [...] }`,
 * answered by `{ data: [{ index, embedding }] }`. Network I/O only, so it runs on the main event loop. Vectors are
 * normalised here: not every service returns unit length.
 */
import { EmbeddingError, type EmbeddingProvider } from './provider.js';
import { normalize } from './vectors.js';

export interface RemoteProviderOptions {
  /** Base URL, e.g. `https://api.openai.com/v1`; `/embeddings` is appended. */
  baseUrl: string;
  model: string;
  apiKey: string | null;
  /** Texts per request. */
  batchSize?: number;
  timeoutMs?: number;
  /** Further attempts after a 429, a 5xx or a network failure. */
  retries?: number;
  /** First back-off; doubles per attempt (a Retry-After header wins when shorter than 30 s). */
  backoffMs?: number;
}

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RemoteEmbeddingProvider implements EmbeddingProvider {
  readonly id: string;
  dimensions: number | null = null;
  private readonly url: string;

  constructor(private readonly options: RemoteProviderOptions) {
    this.id = `remote:${options.model}`;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const batchSize = this.options.batchSize ?? 64;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += batchSize) out.push(...(await this.request(texts.slice(i, i + batchSize))));
    return out;
  }

  async close(): Promise<void> {}

  private async request(input: string[]): Promise<Float32Array[]> {
    const retries = this.options.retries ?? 2;
    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      try {
        response = await fetch(this.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: this.options.model, input }),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
      } catch (error) {
        if (attempt < retries) {
          await sleep(this.backoff(attempt, null));
          continue;
        }
        const reason = error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached';
        throw new EmbeddingError(`The embedding service ${reason}.`, true);
      }
      if (response.ok) return this.parse((await response.json().catch(() => ({}))) as EmbeddingsResponse, input.length);
      const retryable = response.status === 429 || response.status >= 500;
      await response.body?.cancel().catch(() => undefined);
      if (retryable && attempt < retries) {
        await sleep(this.backoff(attempt, response.headers.get('retry-after')));
        continue;
      }
      throw new EmbeddingError(`The embedding service answered HTTP ${response.status}.`, retryable);
    }
  }

  private backoff(attempt: number, retryAfter: string | null): number {
    const exponential = (this.options.backoffMs ?? 500) * 2 ** attempt;
    const told = retryAfter !== null ? Number(retryAfter) * 1000 : NaN;
    return Number.isFinite(told) && told >= 0 && told <= 30_000 ? told : exponential;
  }

  private parse(body: EmbeddingsResponse, expected: number): Float32Array[] {
    const data = Array.isArray(body.data) ? body.data : [];
    if (data.length !== expected) throw new EmbeddingError(`The embedding service returned ${data.length} vectors for ${expected} texts.`);
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((item) => {
      const values = item.embedding;
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) {
        throw new EmbeddingError('The embedding service returned a malformed vector.');
      }
      if (this.dimensions !== null && values.length !== this.dimensions) {
        throw new EmbeddingError(`The embedding service changed its vector length from ${this.dimensions} to ${values.length}.`);
      }
      this.dimensions = values.length;
      return normalize(Float32Array.from(values as number[]));
    });
  }
}
