/**
 * The search index's upkeep in one process: jobs left by a stopped or crashed process are resumed, each connection
 * is synced again when its schedule says so, and old versions of the index are removed. A process that does not sync
 * (INDEX_SYNC off) leaves all of this to those that do; its searches still read the index.
 */
import type { Logger } from '../lib/logger.js';
import type { DatabaseConnectionRepository } from '../repositories/database-connection-repository.js';
import type { IndexJobRunner } from './job-runner.js';
import type { IndexStore } from './index-store.js';
import type { SyncQueue } from './sync-queue.js';
import type { ConnectionCatalog } from '../search-core/connection-catalog.js';

/** How often each process looks for connections whose scheduled sync is due. */
export const SCHEDULE_POLL_MS = 60_000;

export interface IndexScheduleDeps {
  runner: Pick<IndexJobRunner, 'start' | 'stop'>;
  /** Reads the changes of tables in poll mode between their full syncs. */
  poller?: { start(): void; stop(): Promise<void> };
  /** Stream mode's reader of replication slots (PostgreSQL). */
  streamer?: { start(): void; stop(): Promise<void> };
  /** Connections whose scheduled sync is due, each claimed by one process. */
  connections: Pick<DatabaseConnectionRepository, 'dueForSync' | 'claimScheduledSync'>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  queue: Pick<SyncQueue, 'enqueue' | 'keepIndexable'>;
  /** A due connection whose sync could not be queued. */
  onError(error: unknown): void;
  store: Pick<IndexStore, 'close' | 'spaceNames' | 'cleanUp'>;
  /** Spaces a sync job writes now, in any process. */
  jobs: { runningSpaces(): Promise<string[]> };
  /** This process runs sync jobs. */
  syncing: boolean;
  /** How often old versions of every space are removed (INDEX_KEEP_VERSIONS_MS: as often as they become old). */
  cleanupEveryMs: number;
  logger: Pick<Logger, 'warn' | 'info'>;
  now?: () => number;
}

export class IndexSchedule {
  private timer: NodeJS.Timeout | null = null;
  private cleanupTimer: NodeJS.Timeout | null = null;
  private cleaning: Promise<unknown> | null = null;

  private readonly now: () => number;

  constructor(private readonly deps: IndexScheduleDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Resumes jobs left by a stopped or crashed process, starts the runner and the schedule (when this process syncs). */
  start(): void {
    if (!this.deps.syncing) return;
    this.deps.runner.start();
    this.deps.poller?.start();
    this.deps.streamer?.start();
    const tick = () => void this.runSchedule().catch((error) => this.deps.logger.warn({ err: error }, 'index schedule'));
    this.timer = setInterval(tick, SCHEDULE_POLL_MS);
    this.timer.unref();
    tick();
    // Every sync writes new versions of its space; without this, the old ones stay until the space's next sync.
    this.cleanupTimer = setInterval(() => {
      this.cleaning ??= this.cleanUp().catch((error) => this.deps.logger.warn({ err: error }, 'index cleanup')).finally(() => (this.cleaning = null));
    }, this.deps.cleanupEveryMs);
    this.cleanupTimer.unref();
  }

  /**
   * Queues the syncs that are due: each connection with a schedule whose next sync time has passed, claimed by one
   * process (the one whose update moves the time on). New tables of the schema join the index, dropped ones leave.
   */
  async runSchedule(batch = 20): Promise<number> {
    const now = new Date(this.now());
    let queued = 0;
    for (const record of await this.deps.connections.dueForSync(now, batch)) {
      const next = new Date(now.getTime() + record.syncIntervalMinutes! * 60_000);
      if (!(await this.deps.connections.claimScheduledSync(record.id, record.nextSyncAt, next))) continue;
      try {
        const schema = await this.deps.queue.keepIndexable(record, await this.deps.catalog.tables(record, true));
        queued += (await this.deps.queue.enqueue(record, schema, 'schedule')).length;
      } catch (error) {
        this.deps.onError(error); // an unreachable database waits for its next turn
      }
    }
    return queued;
  }

  /**
   * Removes every space's versions older than INDEX_KEEP_VERSIONS_MS (and compacts it), except spaces a sync is
   * writing now: that sync optimizes its space when it ends. A space that fails is left for the next round.
   */
  async cleanUp(): Promise<{ spaces: number; versions: number; bytes: number }> {
    const busy = new Set(await this.deps.jobs.runningSpaces());
    const done = { spaces: 0, versions: 0, bytes: 0 };
    for (const name of await this.deps.store.spaceNames()) {
      if (busy.has(name)) continue;
      try {
        const removed = await this.deps.store.cleanUp(name);
        done.spaces += 1;
        done.versions += removed.versions;
        done.bytes += removed.bytes;
      } catch (error) {
        this.deps.logger.warn({ err: error, space: name }, 'index cleanup of a space failed; it is tried again next round');
      }
    }
    if (done.versions > 0) this.deps.logger.info(done, 'index cleanup removed old versions');
    return done;
  }

  /** Graceful stop: running jobs are queued again for the next start, then the index closes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.cleanupTimer) clearInterval(this.cleanupTimer);
    this.timer = null;
    this.cleanupTimer = null;
    await this.cleaning;
    await this.deps.poller?.stop();
    await this.deps.streamer?.stop();
    await this.deps.runner.stop();
    await this.deps.store.close();
  }
}
