import type { ApiKeyRepository } from '../repositories/api-key-repository.js';
import type { NewRequestLog, RequestLogRepository } from '../repositories/request-log-repository.js';
import { BatchWriter } from './batch-writer.js';

export interface UsageRecorderDeps {
  logs: Pick<RequestLogRepository, 'insertMany'>;
  keys: Pick<ApiKeyRepository, 'addUsage'>;
  flushMs: number;
  onError(error: unknown): void;
  /** Most rows kept while the store is failing; beyond it the oldest are dropped (and reported). */
  maxBuffered?: number;
}

/**
 * One row per API-key request, written in batches (BatchWriter), so recording usage never adds a synchronous
 * database write to a request. After each batch, every key's usage count and last use move in one UPDATE.
 */
export class UsageRecorder {
  private readonly writer: BatchWriter<NewRequestLog>;

  constructor(private readonly deps: UsageRecorderDeps) {
    this.writer = new BatchWriter({
      write: (batch) => this.write(batch),
      flushMs: deps.flushMs,
      onError: deps.onError,
      label: 'request records',
      maxBuffered: deps.maxBuffered,
    });
  }

  start(): void {
    this.writer.start();
  }

  record(row: NewRequestLog): void {
    this.writer.add(row);
  }

  /** Writes everything buffered so far; concurrent calls share one write. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  private async write(batch: NewRequestLog[]): Promise<void> {
    // A failure here rejects, so the batch stays buffered for the next flush.
    await this.deps.logs.insertMany(batch);
    const perKey = new Map<string, { count: number; last: Date }>();
    for (const row of batch) {
      if (!row.keyId || row.rateLimited) continue;
      const entry = perKey.get(row.keyId) ?? { count: 0, last: row.createdAt };
      entry.count += 1;
      if (row.createdAt > entry.last) entry.last = row.createdAt;
      perKey.set(row.keyId, entry);
    }
    // The rows are written: a failed counter update is reported, never retried (it would insert them twice).
    try {
      for (const [keyId, { count, last }] of perKey) await this.deps.keys.addUsage(keyId, count, last);
    } catch (error) {
      this.deps.onError(error);
    }
  }
}
