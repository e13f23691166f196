import type { ApiKeyRepository } from '../../repositories/api-key-repository.js';
import type { RequestUsageRepository, UsageDelta } from '../../repositories/request-usage-repository.js';
import { BatchWriter } from '../../lib/batch-writer.js';

/** One finished API-key request. */
export interface UsageEvent {
  keyId: string;
  userId: string | null;
  /** `METHOD /path/template` of the operation. */
  endpoint: string;
  status: number;
  durationMs: number;
  rateLimited: boolean;
  /** False when the operation does not count against the key's limit. */
  counted: boolean;
  /** When it happened, in ms. */
  at: number;
}

/** A delta with what the key's own usage counter needs: requests that were not refused, and the last of them. */
interface PendingUsage extends UsageDelta {
  admitted: number;
  lastAtMs: number;
}

export interface UsageRecorderDeps {
  usage: Pick<RequestUsageRepository, 'add'>;
  keys: Pick<ApiKeyRepository, 'addUsage'>;
  flushMs: number;
  onError(error: unknown): void;
  /** Told which keys have more requests counted against their limit in the store now (a rate-limit status read before is stale). */
  onCountedWritten?(keyIds: string[]): void;
  /** Most per-minute rows kept while the store is failing; beyond it the oldest are dropped (and reported). */
  maxBuffered?: number;
  /** A failure the store will never get over (a constraint violation): the row is dropped, not retried. */
  isRejected?(error: unknown): boolean;
  now?: () => number;
}

const MINUTE_MS = 60_000;
/** The roll-up row a count belongs to. */
const deltaId = (keyId: string, endpoint: string, minuteMs: number) => `${keyId}\u0000${endpoint}\u0000${minuteMs}`;

/**
 * Counts every API-key request into its key, endpoint and minute in memory, and writes the counts every `flushMs`
 * as additions to the per-minute roll-up (BatchWriter: a failed write keeps them for the next flush). Recording
 * a request is a map update, never a database write on the request path; a busy key costs a few rows a minute.
 * After each batch, every key's usage count and last use move in one UPDATE.
 */
export class UsageRecorder {
  private current = new Map<string, PendingUsage>();
  /** Requests per key that count against its limit, recorded but not yet written. */
  private readonly unwritten = new Map<string, number>();
  private readonly writer: BatchWriter<PendingUsage>;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: UsageRecorderDeps) {
    this.writer = new BatchWriter({
      write: (batch) => this.write(batch),
      flushMs: deps.flushMs,
      onError: deps.onError,
      label: 'per-minute usage counts',
      maxBuffered: deps.maxBuffered,
      isRejected: deps.isRejected,
      now: deps.now,
    });
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.deps.flushMs);
    this.timer.unref();
  }

  record(event: UsageEvent): void {
    const minuteMs = event.at - (event.at % MINUTE_MS);
    const id = deltaId(event.keyId, event.endpoint, minuteMs);
    let pending = this.current.get(id);
    if (!pending) {
      pending = { keyId: event.keyId, userId: event.userId, endpoint: event.endpoint, minuteMs, requests: 0, failed: 0, rateLimited: 0, counted: 0, totalMs: 0, admitted: 0, lastAtMs: 0 };
      this.current.set(id, pending);
    }
    pending.requests += 1;
    pending.totalMs += event.durationMs;
    if (event.status >= 400) pending.failed += 1;
    if (event.rateLimited) {
      pending.rateLimited += 1;
    } else {
      pending.admitted += 1;
      if (event.counted) {
        pending.counted += 1;
        this.unwritten.set(event.keyId, (this.unwritten.get(event.keyId) ?? 0) + 1);
      }
      if (event.at > pending.lastAtMs) pending.lastAtMs = event.at;
    }
  }

  /** Whether the key has requests counted against its limit that the store does not have yet. */
  hasUnwritten(keyId: string): boolean {
    return this.unwritten.has(keyId);
  }

  /** Writes everything counted so far; concurrent calls share one write. */
  flush(): Promise<void> {
    this.drain();
    return this.writer.flush();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.drain();
    await this.writer.stop();
  }

  /** Hands this interval's counts to the writer, which keeps them until a write succeeds. */
  private drain(): void {
    if (this.current.size === 0) return;
    for (const pending of this.current.values()) this.writer.add(pending);
    this.current = new Map();
  }

  private async write(batch: PendingUsage[]): Promise<void> {
    // A batch kept from a failed write may hold the same key, endpoint and minute as a newer one; the upsert must
    // see each once. Copies: the batch's own objects stay as they were, should this write fail and be retried.
    const merged = new Map<string, PendingUsage>();
    for (const pending of batch) {
      const id = deltaId(pending.keyId, pending.endpoint, pending.minuteMs);
      const into = merged.get(id);
      if (!into) {
        merged.set(id, { ...pending });
        continue;
      }
      into.requests += pending.requests;
      into.failed += pending.failed;
      into.rateLimited += pending.rateLimited;
      into.counted += pending.counted;
      into.totalMs += pending.totalMs;
      into.admitted += pending.admitted;
      into.lastAtMs = Math.max(into.lastAtMs, pending.lastAtMs);
    }
    // A failure here rejects, so the batch stays buffered for the next flush (the upsert is one transaction).
    await this.deps.usage.add([...merged.values()]);
    for (const pending of batch) {
      const left = (this.unwritten.get(pending.keyId) ?? 0) - pending.counted;
      if (left > 0) this.unwritten.set(pending.keyId, left);
      else this.unwritten.delete(pending.keyId);
    }
    const counted = new Set(batch.filter((pending) => pending.counted > 0).map((pending) => pending.keyId));
    if (counted.size > 0) this.deps.onCountedWritten?.([...counted]);
    const perKey = new Map<string, { count: number; last: number }>();
    for (const pending of merged.values()) {
      if (pending.admitted === 0) continue;
      const entry = perKey.get(pending.keyId) ?? { count: 0, last: 0 };
      entry.count += pending.admitted;
      entry.last = Math.max(entry.last, pending.lastAtMs);
      perKey.set(pending.keyId, entry);
    }
    // The counts are written: a failed counter update is reported, never retried (it would add them twice).
    try {
      for (const [keyId, { count, last }] of perKey) await this.deps.keys.addUsage(keyId, count, new Date(last));
    } catch (error) {
      this.deps.onError(error);
    }
  }
}
