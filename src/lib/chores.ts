import type { Logger } from './logger.js';

/**
 * A background worker's repeated chores (heartbeats, ticks): a chore that fails is logged and runs again at its next
 * turn, and no chore keeps the process alive. `stop` ends them all.
 */
export class Chores {
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly logger: Pick<Logger, 'warn'>, private readonly name: string) {}

  every(ms: number, chore: () => Promise<unknown>): void {
    const timer = setInterval(() => void chore().catch((error: unknown) => this.logger.warn({ err: error }, this.name)), ms);
    timer.unref();
    this.timers.push(timer);
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
