export interface BatchWriterOptions<Row> {
  /** Writes one batch; a rejection keeps the batch for the next flush. */
  write(batch: Row[]): Promise<void>;
  flushMs: number;
  onError(error: unknown): void;
  /** What the rows are, for the "buffer full" report (e.g. "search records"). */
  label: string;
  /** Most rows kept while the store is failing; beyond it the oldest are dropped (and reported). */
  maxBuffered?: number;
}

/**
 * Collects rows in memory and writes them in batches every `flushMs`, so recording never adds a synchronous
 * database write to a request. A failed write keeps its rows (ahead of newer ones) for the next flush; concurrent
 * flushes share one write. Shared by the usage and search recorders.
 */
export class BatchWriter<Row> {
  private buffer: Row[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(private readonly options: BatchWriterOptions<Row>) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs);
    this.timer.unref();
  }

  add(row: Row): void {
    this.buffer.push(row);
    const max = this.options.maxBuffered ?? 100_000;
    if (this.buffer.length > max) {
      const dropped = this.buffer.splice(0, this.buffer.length - max);
      this.options.onError(new Error(`buffer full: dropped the ${dropped.length} oldest ${this.options.label}`));
    }
  }

  /** Rows waiting for the next write. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Writes everything buffered so far; concurrent calls share one write. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.write(batch).finally(() => (this.flushing = null));
    await this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /**
   * A failed batch is retried row by row at once. If some rows go in, the store is up and the rows that still
   * fail are bad in themselves (they would block every later batch forever): they are dropped and reported.
   * If none goes in, the store is down: every row is kept, ahead of newer ones, for the next flush.
   */
  private async write(batch: Row[]): Promise<void> {
    try {
      await this.options.write(batch);
      return;
    } catch (error) {
      if (batch.length === 1) {
        this.buffer = batch.concat(this.buffer);
        this.options.onError(error);
        return;
      }
    }
    const failed: Row[] = [];
    let lastError: unknown;
    for (const row of batch) {
      try {
        await this.options.write([row]);
      } catch (error) {
        failed.push(row);
        lastError = error;
      }
    }
    if (failed.length === batch.length) {
      this.buffer = batch.concat(this.buffer);
      this.options.onError(lastError);
    } else if (failed.length > 0) {
      this.options.onError(new Error(`dropped ${failed.length} ${this.options.label} the store refuses: ${(lastError as Error)?.message ?? lastError}`));
    }
  }
}
