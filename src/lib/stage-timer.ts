/**
 * The time one piece of work spends in each of its stages, reported as a W3C Server-Timing header value
 * (`name;dur=ms`): what a search's answer says about where its time went, read by clients and by the
 * search benchmark.
 */
export class StageTimer {
  private readonly stages = new Map<string, number>();
  private readonly started = performance.now();

  /** Adds `ms` to a stage (a stage measured in several parts sums them). */
  add(stage: string, ms: number): void {
    this.stages.set(stage, (this.stages.get(stage) ?? 0) + ms);
  }

  /** Runs `work` and adds its duration to the stage. */
  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      this.add(stage, performance.now() - t0);
    }
  }

  /** The stages in the order first measured, then `total` since the timer was made. */
  header(): string {
    const entries = [...this.stages, ['total', performance.now() - this.started] as const];
    return entries.map(([stage, ms]) => `${stage};dur=${ms.toFixed(1)}`).join(', ');
  }
}
