import { Op, UniqueConstraintError, type InferAttributes, type WhereOptions } from 'sequelize';
import { IndexJobModel } from '../models/index.js';
import type { IndexJobStatus } from '../models/index-job.js';

export type IndexJobRecord = InferAttributes<IndexJobModel>;
export type NewIndexJob = Pick<IndexJobRecord, 'id' | 'connectionId' | 'tableName' | 'space' | 'trigger' | 'semantic' | 'providerId' | 'rowLimit'>;
export type IndexJobProgress = Partial<Pick<IndexJobRecord,
  'rowsTotal' | 'rowsDone' | 'rowsWritten' | 'rowsEmbedded' | 'rowsSkipped' | 'rowsOversize' | 'rowsDeleted' | 'truncated' | 'cursor' | 'heartbeatAt' | 'error' | 'finishedAt' | 'rowLimit' | 'semantic' | 'providerId'>>;

const LIVE: IndexJobStatus[] = ['queued', 'running'];

/** Claims of a job before it ends failed, when the caller names none. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** The error of a job that was claimed `attempts` times and never finished: its process died each time. */
export function attemptsExhausted(attempts: number): { code: string; message: string } {
  return {
    code: 'SYNC_ATTEMPTS_EXHAUSTED',
    message: `The sync was started ${attempts} times and never finished (the server stopped while it ran); it is not resumed again. Start a sync to try again.`,
  };
}
const plain = (model: IndexJobModel | null): IndexJobRecord | null => (model ? model.get({ plain: true }) : null);

/**
 * Sync jobs of the search index. The store is the queue: a job is claimed with a conditional update,
 * kept alive by a heartbeat and claimed again by any process once its heartbeat is stale. Two unique indexes keep
 * the invariants whatever processes race: one live job per table, one running job per search space.
 */
export const indexJobRepository = {
  /** A new queued job; null when the table already has a live (queued or running) job. */
  async createQueued(job: NewIndexJob): Promise<IndexJobRecord | null> {
    try {
      await IndexJobModel.create({ ...job, status: 'queued' });
      return this.findById(job.id); // read back: defaults the insert left to the store
    } catch (error) {
      if (error instanceof UniqueConstraintError) return null;
      throw error;
    }
  },

  async findById(id: string): Promise<IndexJobRecord | null> {
    return plain(await IndexJobModel.findByPk(id));
  },

  /** The table's newest job, whatever its status. */
  async latest(connectionId: string, tableName: string): Promise<IndexJobRecord | null> {
    if (tableName.includes('\0')) return null;
    return plain(await IndexJobModel.findOne({ where: { connectionId, tableName }, order: [['createdAt', 'DESC'], ['id', 'DESC']] }));
  },

  async findLive(connectionId: string, tableName: string): Promise<IndexJobRecord | null> {
    if (tableName.includes('\0')) return null;
    return plain(await IndexJobModel.findOne({ where: { connectionId, tableName, status: LIVE } }));
  },

  /** The queued and running jobs of these connections. */
  async liveByConnections(connectionIds: string[]): Promise<IndexJobRecord[]> {
    if (connectionIds.length === 0) return [];
    const rows = await IndexJobModel.findAll({ where: { connectionId: connectionIds, status: LIVE } });
    return rows.map((row) => row.get({ plain: true }));
  },

  /** The newest job of every table of these connections. */
  async latestByConnections(connectionIds: string[]): Promise<IndexJobRecord[]> {
    if (connectionIds.length === 0) return [];
    const rows = await IndexJobModel.findAll({ where: { connectionId: connectionIds }, order: [['createdAt', 'DESC'], ['id', 'DESC']] });
    const newest = new Map<string, IndexJobRecord>();
    for (const row of rows) {
      const key = `${row.connectionId}\u0000${row.tableName}`;
      if (!newest.has(key)) newest.set(key, row.get({ plain: true }));
    }
    return [...newest.values()];
  },

  /**
   * Claims the oldest job no process is running: queued, or running with a heartbeat older than `staleBefore` (its
   * process stopped or died). The conditional update makes the claim safe against other processes; the unique index
   * on running jobs per space refuses a claim while another job of the same space runs. Every claim counts as an
   * attempt; a job already claimed `maxAttempts` times (each time its process died: a stop hands it back uncounted)
   * ends failed instead, so data that takes a server down cannot take it down at every start.
   */
  async claimNext(now: Date, staleBefore: Date, exclude: string[], maxAttempts = DEFAULT_MAX_ATTEMPTS): Promise<IndexJobRecord | null> {
    const stale = { [Op.or]: [{ heartbeatAt: null }, { heartbeatAt: { [Op.lt]: staleBefore } }] };
    const claimable: WhereOptions = { [Op.or]: [{ status: 'queued', ...stale }, { status: 'running', ...stale }] };
    const busySpaces = (await IndexJobModel.findAll({
      where: { status: 'running', heartbeatAt: { [Op.gte]: staleBefore } },
      attributes: ['space'],
    })).map((row) => row.space);
    const candidates = await IndexJobModel.findAll({
      where: {
        [Op.and]: [
          claimable,
          exclude.length > 0 ? { id: { [Op.notIn]: exclude } } : {},
          busySpaces.length > 0 ? { space: { [Op.notIn]: busySpaces } } : {},
        ],
      },
      order: [['createdAt', 'ASC'], ['id', 'ASC']],
      limit: 10,
    });
    for (const candidate of candidates) {
      const unchanged = { id: candidate.id, status: candidate.status, heartbeatAt: candidate.heartbeatAt, attempts: candidate.attempts };
      if (candidate.attempts >= maxAttempts) {
        await IndexJobModel.update(
          { status: 'failed', error: attemptsExhausted(candidate.attempts), finishedAt: now, heartbeatAt: null },
          { where: unchanged },
        );
        continue;
      }
      try {
        // A stale running job of the same space still holds the space: hand it back before claiming another.
        if (candidate.status === 'queued') await this.releaseStale(candidate.space, staleBefore);
        const [claimed] = await IndexJobModel.update(
          {
            status: 'running', heartbeatAt: now, resumedAt: now, rowsAtResume: candidate.rowsDone, startedAt: candidate.startedAt ?? now,
            attempts: candidate.attempts + 1,
          },
          { where: unchanged },
        );
        if (claimed === 1) return this.findById(candidate.id);
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error; // another job of this space runs: try the next
      }
    }
    return null;
  },

  /** Writes progress while the job is still running here; false when it was cancelled meanwhile. */
  async progress(id: string, changes: IndexJobProgress): Promise<boolean> {
    const [updated] = await IndexJobModel.update(changes, { where: { id, status: 'running' } });
    return updated === 1;
  },

  /**
   * Ends a running job (done or failed); false when it was cancelled meanwhile. `next` is queued in the same
   * transaction, so the table is never seen without a live job between the two.
   */
  async finish(id: string, status: 'done' | 'failed', changes: IndexJobProgress, next?: NewIndexJob | null): Promise<boolean> {
    return IndexJobModel.sequelize!.transaction(async (transaction) => {
      const [updated] = await IndexJobModel.update({ ...changes, status, heartbeatAt: null }, { where: { id, status: 'running' }, transaction });
      if (updated === 1 && next) await IndexJobModel.create({ ...next, status: 'queued' }, { transaction });
      return updated === 1;
    });
  },

  /** Cancels a live job; false when it had already ended. */
  async cancel(id: string, now: Date): Promise<boolean> {
    const [updated] = await IndexJobModel.update({ status: 'cancelled', finishedAt: now, heartbeatAt: null }, { where: { id, status: LIVE } });
    return updated === 1;
  },

  async touch(ids: string[], now: Date): Promise<void> {
    if (ids.length > 0) await IndexJobModel.update({ heartbeatAt: now }, { where: { id: ids, status: 'running' } });
  },

  /**
   * Hands running jobs back to the queue (graceful stop): the next process to start resumes them at once. The claim
   * that is handed back did not fail, so it is not counted as an attempt.
   */
  async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await IndexJobModel.sequelize!.transaction(async (transaction) => {
      await IndexJobModel.decrement('attempts', { by: 1, where: { id: ids, status: 'running', attempts: { [Op.gt]: 0 } }, transaction });
      await IndexJobModel.update({ status: 'queued', heartbeatAt: null }, { where: { id: ids, status: 'running' }, transaction });
    });
  },

  /** Keeps a table's job history short: drops its ended jobs other than `keepIds`. */
  async pruneEnded(connectionId: string, tableName: string, keepIds: string[]): Promise<void> {
    await IndexJobModel.destroy({
      where: { connectionId, tableName, id: { [Op.notIn]: keepIds }, status: ['done', 'failed', 'cancelled'] },
    });
  },

  /**
   * Cancels every live job of a connection whose data was replaced as a whole; returns their ids. A process running
   * one learns it at its next page (its progress is refused) and can no longer end it done.
   */
  async cancelConnection(connectionId: string, now: Date): Promise<string[]> {
    const live = await IndexJobModel.findAll({ where: { connectionId, status: LIVE }, attributes: ['id'] });
    const ids = live.map((row) => row.id);
    if (ids.length > 0) await IndexJobModel.update({ status: 'cancelled', finishedAt: now, heartbeatAt: null }, { where: { id: ids, status: LIVE } });
    return ids;
  },

  /** Cancels every live job of tables that left the index. */
  async cancelTables(connectionId: string, tableNames: string[], now: Date): Promise<string[]> {
    if (tableNames.length === 0) return [];
    const live = await IndexJobModel.findAll({ where: { connectionId, tableName: tableNames, status: LIVE }, attributes: ['id'] });
    const ids = live.map((row) => row.id);
    if (ids.length > 0) await IndexJobModel.update({ status: 'cancelled', finishedAt: now, heartbeatAt: null }, { where: { id: ids, status: LIVE } });
    return ids;
  },

  /** Spaces a sync job is writing now (in any process): the cleanup schedule leaves them for its next round. */
  async runningSpaces(): Promise<string[]> {
    const rows = await IndexJobModel.findAll({ attributes: ['space'], where: { status: 'running' } });
    return [...new Set(rows.map((row) => row.space))];
  },

  /** A running job of `space` whose process is gone goes back to the queue, freeing the space for a claim. */
  async releaseStale(space: string, staleBefore: Date): Promise<void> {
    await IndexJobModel.update(
      { status: 'queued', heartbeatAt: null },
      { where: { space, status: 'running', [Op.or]: [{ heartbeatAt: null }, { heartbeatAt: { [Op.lt]: staleBefore } }] } },
    );
  },
};

export type IndexJobRepository = typeof indexJobRepository;
