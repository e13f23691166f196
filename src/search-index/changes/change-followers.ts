/**
 * What the poller and the streamer share as workers of one process: each follows the sources' changes it claimed in
 * the store (polls by table, streams by connection), keeps the claims alive by a heartbeat, claims what is due on a
 * tick (one tick at a time), and folds the rows it wrote into the index on one schedule per space. Each says what it
 * holds (`heldIds`, the index tables whose claims the heartbeat renews) and how it claims (`claimDue`).
 */
import { Chores } from '../../lib/chores.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/logger.js';
import type { IndexTableRepository } from '../../repositories/index-table-repository.js';
import { FoldSchedule } from './fold-schedule.js';

export interface ChangeFollowersDeps {
  tables: Pick<IndexTableRepository, 'touchPolls'>;
  logger: Pick<Logger, 'warn'>;
  now?: () => number;
  /** A claim whose heartbeat is older than this is another process's to take over (INDEX_SYNC_STALE_MS). */
  staleMs: number;
  /** How often the store is asked for what is due. */
  tickMs?: number;
}

export abstract class ChangeFollowers<Active> {
  /** This process, as the store names the owner of a poll or a stream. */
  readonly owner = newId('poll');
  protected readonly active = new Map<string, Active>();
  protected readonly now: () => number;
  /** Per space: rows written here that its indexes do not hold yet. */
  protected readonly folds: FoldSchedule;
  protected stopping = false;
  /** The tick under way, if any. */
  protected ticking: Promise<void> | null = null;
  /** The folds of quiet spaces under way, if any. */
  private folding: Promise<void> | null = null;
  private readonly chores: Chores;
  /** Ticks asked for at a time of their own (wakeAt), until they run or the workers halt. */
  private readonly wakes = new Set<NodeJS.Timeout>();

  protected constructor(private readonly base: ChangeFollowersDeps, name: string) {
    this.now = base.now ?? Date.now;
    this.chores = new Chores(base.logger, name);
    this.folds = new FoldSchedule(this.now);
  }

  start(): void {
    this.stopping = false;
    // Heartbeats five times per staleness: a claim is renewed well before another process may take it.
    this.chores.every(Math.max(200, Math.round(this.base.staleMs / 5)), () => this.base.tables.touchPolls(this.heldIds(), this.owner, new Date(this.now())));
    this.chores.every(this.base.tickMs ?? 1000, () => this.tick());
    this.chores.every(this.base.tickMs ?? 1000, () => this.foldQuiet());
  }

  /** Folds the spaces nothing was written to for a while (FoldSchedule.foldQuiet); one round at a time. */
  foldQuiet(): Promise<void> {
    this.folding ??= this.folds.foldQuiet().finally(() => {
      this.folding = null;
    });
    return this.folding;
  }

  /** Claims what is due and there is room for, and starts it; one tick at a time. */
  tick(): Promise<void> {
    this.ticking ??= this.claimDue().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  /**
   * A tick at `at` (epoch ms) besides the regular ones: what this process released to be due then is claimed then,
   * not up to a whole tick later. A claim is still the store's conditional update, so any process may win it.
   */
  protected wakeAt(at: number): void {
    if (this.stopping) return;
    const timer = setTimeout(() => {
      this.wakes.delete(timer);
      if (!this.stopping) void this.tick().catch((error: unknown) => this.base.logger.warn({ err: error }, 'change followers: tick'));
    }, Math.max(0, at - this.now()));
    timer.unref();
    this.wakes.add(timer);
  }

  /** No more claims or heartbeats: the tick under way ends first. */
  protected async halt(): Promise<void> {
    this.stopping = true;
    this.chores.stop();
    for (const timer of this.wakes) clearTimeout(timer);
    this.wakes.clear();
    await this.ticking?.catch(() => undefined);
    await this.folding?.catch(() => undefined);
  }

  /** The index tables whose claims this process holds now. */
  protected abstract heldIds(): string[];

  protected abstract claimDue(): Promise<void>;
}
