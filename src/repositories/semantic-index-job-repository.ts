import { Op, UniqueConstraintError, type InferAttributes, type WhereOptions } from 'sequelize';
import { SemanticIndexJobModel } from '../models/index.js';
import type { SemanticJobStatus } from '../models/semantic-index-job.js';

export type SemanticIndexJobRecord = InferAttributes<SemanticIndexJobModel>;
export type NewSemanticIndexJob = Pick<SemanticIndexJobRecord, 'id' | 'connectionId' | 'tableName' | 'providerId' | 'rowLimit'>;
export type SemanticJobProgress = Partial<Pick<SemanticIndexJobRecord,
  'rowsTotal' | 'rowsDone' | 'rowsEmbedded' | 'rowsSkipped' | 'rowsDeleted' | 'truncated' | 'cursor' | 'heartbeatAt' | 'error' | 'finishedAt'>>;

const LIVE: SemanticJobStatus[] = ['queued', 'running'];
const plain = (model: SemanticIndexJobModel | null): SemanticIndexJobRecord | null => (model ? model.get({ plain: true }) : null);

export const semanticIndexJobRepository = {
  /** A new queued job; null when the table already has a live (queued or running) job. */
  async createQueued(job: NewSemanticIndexJob): Promise<SemanticIndexJobRecord | null> {
    try {
      await SemanticIndexJobModel.create({ ...job, status: 'queued' });
      return this.findById(job.id); // read back: defaults the insert left to the store
    } catch (error) {
      if (error instanceof UniqueConstraintError) return null;
      throw error;
    }
  },

  async findById(id: string): Promise<SemanticIndexJobRecord | null> {
    return plain(await SemanticIndexJobModel.findByPk(id));
  },

  /** The table's newest job, whatever its status. */
  async latest(connectionId: string, tableName: string): Promise<SemanticIndexJobRecord | null> {
    // Table names never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (tableName.includes('\0')) return null;
    return plain(await SemanticIndexJobModel.findOne({ where: { connectionId, tableName }, order: [['createdAt', 'DESC'], ['id', 'DESC']] }));
  },

  async findLive(connectionId: string, tableName: string): Promise<SemanticIndexJobRecord | null> {
    return plain(await SemanticIndexJobModel.findOne({ where: { connectionId, tableName, status: LIVE } }));
  },

  /** The newest finished (`done`) job of each table of these connections: what semantic search may read. */
  async latestDone(connectionIds: string[]): Promise<SemanticIndexJobRecord[]> {
    if (connectionIds.length === 0) return [];
    const rows = await SemanticIndexJobModel.findAll({
      where: { connectionId: connectionIds, status: 'done' },
      order: [['finishedAt', 'DESC'], ['id', 'DESC']],
    });
    const newest = new Map<string, SemanticIndexJobRecord>();
    for (const row of rows) {
      const key = `${row.connectionId}\u0000${row.tableName}`;
      if (!newest.has(key)) newest.set(key, row.get({ plain: true }));
    }
    return [...newest.values()];
  },

  /** Live jobs of these connections (to say "being indexed" rather than "not indexed"). */
  async live(connectionIds: string[]): Promise<SemanticIndexJobRecord[]> {
    if (connectionIds.length === 0) return [];
    const rows = await SemanticIndexJobModel.findAll({ where: { connectionId: connectionIds, status: LIVE } });
    return rows.map((row) => row.get({ plain: true }));
  },

  /**
   * Claims the oldest job no process is running: queued, or running with a heartbeat older than `staleBefore` (its
   * process stopped or died). The conditional update makes the claim safe against other processes.
   */
  async claimNext(now: Date, staleBefore: Date, exclude: string[]): Promise<SemanticIndexJobRecord | null> {
    const claimable: WhereOptions = {
      [Op.or]: [
        { status: 'queued', [Op.or]: [{ heartbeatAt: null }, { heartbeatAt: { [Op.lt]: staleBefore } }] },
        { status: 'running', [Op.or]: [{ heartbeatAt: null }, { heartbeatAt: { [Op.lt]: staleBefore } }] },
      ],
    };
    const candidates = await SemanticIndexJobModel.findAll({
      where: { [Op.and]: [claimable, exclude.length > 0 ? { id: { [Op.notIn]: exclude } } : {}] },
      order: [['createdAt', 'ASC'], ['id', 'ASC']],
      limit: 5,
    });
    for (const candidate of candidates) {
      const [claimed] = await SemanticIndexJobModel.update(
        { status: 'running', heartbeatAt: now, resumedAt: now, rowsAtResume: candidate.rowsDone, startedAt: candidate.startedAt ?? now },
        { where: { id: candidate.id, status: candidate.status, heartbeatAt: candidate.heartbeatAt } },
      );
      if (claimed === 1) return this.findById(candidate.id);
    }
    return null;
  },

  /** Writes progress while the job is still running here; false when it was cancelled meanwhile. */
  async progress(id: string, changes: SemanticJobProgress): Promise<boolean> {
    const [updated] = await SemanticIndexJobModel.update(changes, { where: { id, status: 'running' } });
    return updated === 1;
  },

  /** Ends a running job (done or failed); false when it was cancelled meanwhile. */
  async finish(id: string, status: 'done' | 'failed', changes: SemanticJobProgress): Promise<boolean> {
    const [updated] = await SemanticIndexJobModel.update({ ...changes, status, heartbeatAt: null }, { where: { id, status: 'running' } });
    return updated === 1;
  },

  /** Cancels a live job; false when it had already ended. */
  async cancel(id: string, now: Date): Promise<boolean> {
    const [updated] = await SemanticIndexJobModel.update({ status: 'cancelled', finishedAt: now, heartbeatAt: null }, { where: { id, status: LIVE } });
    return updated === 1;
  },

  async touch(ids: string[], now: Date): Promise<void> {
    if (ids.length > 0) await SemanticIndexJobModel.update({ heartbeatAt: now }, { where: { id: ids, status: 'running' } });
  },

  /** Hands running jobs back to the queue (graceful stop): the next process to start resumes them at once. */
  async release(ids: string[]): Promise<void> {
    if (ids.length > 0) await SemanticIndexJobModel.update({ status: 'queued', heartbeatAt: null }, { where: { id: ids, status: 'running' } });
  },

  /** Keeps a table's job history short: drops its ended jobs other than `keepIds`. */
  async pruneEnded(connectionId: string, tableName: string, keepIds: string[]): Promise<void> {
    await SemanticIndexJobModel.destroy({
      where: { connectionId, tableName, id: { [Op.notIn]: keepIds }, status: ['done', 'failed', 'cancelled'] },
    });
  },
};

export type SemanticIndexJobRepository = typeof semanticIndexJobRepository;
