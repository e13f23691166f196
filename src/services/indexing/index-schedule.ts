/**
 * The search index's upkeep in one process (issue 27): jobs left by a stopped or crashed process are resumed, and each
 * connection is synced again when its schedule says so. A process that does not sync (INDEX_SYNC off) leaves all of
 * this to those that do; its searches still read the index.
 */
import type { Logger } from '../../lib/logger.js';
import type { IndexJobRunner } from '../../search-index/job-runner.js';
import type { IndexStore } from '../../search-index/index-store.js';
import type { IndexService } from './index-service.js';

/** How often each process looks for connections whose scheduled sync is due. */
export const SCHEDULE_POLL_MS = 60_000;

export interface IndexScheduleDeps {
  runner: Pick<IndexJobRunner, 'start' | 'stop'>;
  service: Pick<IndexService, 'runSchedule'>;
  store: Pick<IndexStore, 'close'>;
  /** This process runs sync jobs. */
  syncing: boolean;
  logger: Pick<Logger, 'warn'>;
}

export class IndexSchedule {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: IndexScheduleDeps) {}

  /** Resumes jobs left by a stopped or crashed process, starts the runner and the schedule (when this process syncs). */
  start(): void {
    if (!this.deps.syncing) return;
    this.deps.runner.start();
    const tick = () => void this.deps.service.runSchedule().catch((error) => this.deps.logger.warn({ err: error }, 'index schedule'));
    this.timer = setInterval(tick, SCHEDULE_POLL_MS);
    this.timer.unref();
    tick();
  }

  /** Graceful stop: running jobs are queued again for the next start, then the index closes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.deps.runner.stop();
    await this.deps.store.close();
  }
}
