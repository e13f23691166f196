export interface RetentionDeps {
  /** Each deletes up to `batchSize` rows older than `cutoff` and says how many went. */
  stores: Record<string, { deleteOlderThan(cutoff: Date, batchSize: number): Promise<number> }>;
  retentionDays: number;
  onError(error: unknown): void;
  now?: () => number;
  /** How often the job runs; it also runs once at start. */
  intervalMs?: number;
  batchSize?: number;
  /** Rows were deleted (those of caches built from them must go too). */
  onDeleted?(deleted: Record<string, number>): void;
}

/**
 * ANALYTICS_RETENTION_DAYS: search records, their roll-ups and per-minute key usage from before the UTC day that many
 * days ago are deleted, in small batches so no delete holds a long lock on the store. Nothing outlives the
 * retention in another form: the roll-ups exist for speed and hold query texts too, so they go with the raw rows.
 */
export class RetentionService {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<Record<string, number>> | null = null;
  private stopped = false;

  constructor(private readonly deps: RetentionDeps) {}

  start(): void {
    if (this.timer) return;
    void this.runSafely();
    this.timer = setInterval(() => void this.runSafely(), this.deps.intervalMs ?? 6 * 3_600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Deletes everything past retention now; returns how many rows went per store. Concurrent calls share a run. */
  run(): Promise<Record<string, number>> {
    this.running ??= this.purge().finally(() => (this.running = null));
    return this.running;
  }

  private async runSafely(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.deps.onError(error);
    }
  }

  private async purge(): Promise<Record<string, number>> {
    // Whole UTC days, so raw rows and their hourly and daily roll-ups go together.
    const day = 86_400_000;
    const cutoff = new Date(Math.floor(((this.deps.now ?? Date.now)() - this.deps.retentionDays * day) / day) * day);
    const batchSize = this.deps.batchSize ?? 5000;
    const deleted: Record<string, number> = {};
    for (const [name, store] of Object.entries(this.deps.stores)) {
      deleted[name] = 0;
      for (;;) {
        const count = await store.deleteOlderThan(cutoff, batchSize);
        deleted[name] += count;
        if (count < batchSize || this.stopped) break;
      }
    }
    if (Object.values(deleted).some((count) => count > 0)) this.deps.onDeleted?.(deleted);
    return deleted;
  }
}
