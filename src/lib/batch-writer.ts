export interface BatchWriterOptions<Row> {
  /** Writes one batch, all or nothing; a rejection keeps the batch for a later attempt. */
  write(batch: Row[]): Promise<void>;
  flushMs: number;
  onError(error: unknown): void;
  /** What the rows are, for reports (e.g. "search records"). */
  label: string;
  /** Most rows kept while the store is failing; beyond it the oldest are dropped (counted and reported). */
  maxBuffered?: number;
  /**
   * True for a failure that no retry can cure: the store refuses a row itself (a constraint violation). Anything
   * else (the store down, out of connections, busy) is temporary: the rows are kept and tried again later.
   */
  isRejected?(error: unknown): boolean;
  /** Longest wait between attempts while the store keeps failing (default 30 s). */
  maxBackoffMs?: number;
  /** Time source (tests). */
  now?: () => number;
}

/** What the writer did with its rows, for health and tests. */
export interface BatchWriterStats {
  pending: number;
  /** Rows the store refused for good (constraint violations), dropped. */
  rejected: number;
  /** Rows dropped because the buffer was full while the store was failing. */
  overflowed: number;
  /** Consecutive failed attempts of the current outage (0 when the last write went in). */
  failures: number;
}

/**
 * Collects rows in memory and writes them in batches every `flushMs`, so recording never adds a synchronous
 * database write to a request. Shared by the usage and search recorders:
 * - A temporary failure keeps the whole batch, ahead of newer rows, and the next attempt waits: `flushMs` doubled
 *   per failed attempt, at most `maxBackoffMs`. A store that is down costs one attempt per wait, never one per row.
 * - A batch the store refuses (some row violates a constraint) is split in halves until the refused rows are alone:
 *   those are dropped and counted, every other row goes in. A temporary failure while splitting keeps what is left.
 * - Memory is bounded by `maxBuffered`: while the store fails, the oldest rows beyond it are dropped and counted.
 * Concurrent flushes share one write.
 */
export class BatchWriter<Row> {
  private buffer: Row[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly now: () => number;
  private failures = 0;
  private nextAttemptAt = 0;
  private rejected = 0;
  private overflowed = 0;

  constructor(private readonly options: BatchWriterOptions<Row>) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs);
    this.timer.unref();
  }

  add(row: Row): void {
    this.buffer.push(row);
    const max = this.options.maxBuffered ?? 100_000;
    if (this.buffer.length > max) {
      const dropped = this.buffer.splice(0, this.buffer.length - max);
      this.overflowed += dropped.length;
      this.options.onError(new Error(`buffer full while the store fails: dropped the ${dropped.length} oldest ${this.options.label}`));
    }
  }

  /** Rows waiting for the next write. */
  get pending(): number {
    return this.buffer.length;
  }

  stats(): BatchWriterStats {
    return { pending: this.buffer.length, rejected: this.rejected, overflowed: this.overflowed, failures: this.failures };
  }

  /**
   * Writes everything buffered so far; concurrent calls share one write. While the store is failing, a call before
   * the next attempt is due writes nothing (readers that flush first do not each hit a store that is down).
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.buffer.length === 0 || this.now() < this.nextAttemptAt) return;
    await this.attempt();
  }

  /** Stops the timer and makes one last attempt, backoff or not (shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.flushing) await this.flushing;
    if (this.buffer.length > 0) await this.attempt();
  }

  private async attempt(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.write(batch).finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(batch: Row[]): Promise<void> {
    const left = await this.writeOrSplit(batch);
    if (left.rows.length === 0) {
      this.failures = 0;
      this.nextAttemptAt = 0;
      return;
    }
    // Kept ahead of newer rows, so they are written in the order they were recorded.
    this.buffer = left.rows.concat(this.buffer);
    this.failures += 1;
    const backoff = Math.min(this.options.maxBackoffMs ?? 30_000, this.options.flushMs * 2 ** (this.failures - 1));
    this.nextAttemptAt = this.now() + backoff;
    // Reported when the outage starts and then at most once per maximal wait, not on every attempt.
    if (this.failures === 1 || backoff === (this.options.maxBackoffMs ?? 30_000)) {
      const reason = (left.error as Error)?.message ?? String(left.error);
      this.options.onError(new Error(`writing ${this.options.label} failed: ${reason}; ${this.buffer.length} kept, next attempt in ${backoff} ms`, { cause: left.error }));
    }
  }

  /**
   * Writes `batch`; when the store refuses it, halves until each refused row is alone and drops those. Returns the
   * rows not written because of a temporary failure (with it), or none.
   */
  private async writeOrSplit(batch: Row[]): Promise<{ rows: Row[]; error?: unknown }> {
    try {
      await this.options.write(batch);
      return { rows: [] };
    } catch (error) {
      if (!this.options.isRejected?.(error)) return { rows: batch, error };
      if (batch.length === 1) {
        this.rejected += 1;
        this.options.onError(new Error(`dropped 1 of the ${this.options.label}: the store refuses it for good (${(error as Error)?.message ?? error}); ${this.rejected} so far`));
        return { rows: [] };
      }
    }
    const half = Math.ceil(batch.length / 2);
    const first = await this.writeOrSplit(batch.slice(0, half));
    if (first.rows.length > 0) return { rows: first.rows.concat(batch.slice(half)), error: first.error };
    return this.writeOrSplit(batch.slice(half));
  }
}
