import { Op, UniqueConstraintError, type InferAttributes } from 'sequelize';
import { IndexTableModel } from '../models/index.js';

export type IndexTableRecord = InferAttributes<IndexTableModel>;
export type IndexTableChanges = Partial<Omit<IndexTableRecord, 'id' | 'connectionId' | 'tableName' | 'createdAt' | 'updatedAt'>>;

const plain = (model: IndexTableModel | null): IndexTableRecord | null => (model ? model.get({ plain: true }) : null);

/** Which tables are in the search index: the store's side of src/search-index. */
export const indexTableRepository = {
  /** The table's record, created (with `defaults`) when it is not in the index yet; safe when two callers race. */
  async ensure(connectionId: string, tableName: string, newId: () => string, defaults: IndexTableChanges = {}): Promise<IndexTableRecord> {
    const existing = await this.find(connectionId, tableName);
    if (existing) return existing;
    try {
      await IndexTableModel.create({ id: newId(), connectionId, tableName, ...defaults });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
    }
    return (await this.find(connectionId, tableName))!;
  },

  async find(connectionId: string, tableName: string): Promise<IndexTableRecord | null> {
    // Table names never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (tableName.includes('\0')) return null;
    return plain(await IndexTableModel.findOne({ where: { connectionId, tableName } }));
  },

  async listByConnections(connectionIds: string[]): Promise<IndexTableRecord[]> {
    if (connectionIds.length === 0) return [];
    const rows = await IndexTableModel.findAll({ where: { connectionId: connectionIds }, order: [['connectionId', 'ASC'], ['tableName', 'ASC']] });
    return rows.map((row) => row.get({ plain: true }));
  },

  async update(id: string, changes: IndexTableChanges): Promise<IndexTableRecord | null> {
    await IndexTableModel.update(changes, { where: { id } });
    return plain(await IndexTableModel.findByPk(id));
  },

  /**
   * Tables in poll mode whose next poll is due and that no live process polls (never polled, released, or its
   * poller's heartbeat older than `staleBefore`), oldest due first.
   */
  async duePolls(now: Date, staleBefore: Date, limit: number): Promise<IndexTableRecord[]> {
    const rows = await IndexTableModel.findAll({
      where: {
        changeColumn: { [Op.ne]: null },
        // A streamed table is read by its connection's stream, not polled.
        changeStream: false,
        syncedAt: { [Op.ne]: null },
        [Op.and]: [
          { [Op.or]: [{ nextPollAt: null }, { nextPollAt: { [Op.lte]: now } }] },
          { [Op.or]: [{ pollOwner: null }, { pollHeartbeatAt: null }, { pollHeartbeatAt: { [Op.lt]: staleBefore } }] },
        ],
      },
      order: [['nextPollAt', 'ASC'], ['id', 'ASC']],
      limit,
    });
    return rows.map((row) => row.get({ plain: true }));
  },

  /**
   * Claims a table's poll for `owner` with a conditional update on what `seen` read: of two processes racing, one
   * gets the table. Null when another claimed it first.
   */
  async claimPoll(seen: IndexTableRecord, owner: string, now: Date): Promise<IndexTableRecord | null> {
    const [claimed] = await IndexTableModel.update(
      { pollOwner: owner, pollHeartbeatAt: now },
      { where: { id: seen.id, changeColumn: seen.changeColumn, pollOwner: seen.pollOwner, pollHeartbeatAt: seen.pollHeartbeatAt } },
    );
    return claimed === 1 ? plain(await IndexTableModel.findByPk(seen.id)) : null;
  },

  /**
   * Writes a poll's progress while `owner` still holds the table and it still follows `changeColumn` (a new column
   * starts from scratch); false when either changed meanwhile.
   */
  async pollProgress(id: string, owner: string, changeColumn: string, changes: IndexTableChanges): Promise<boolean> {
    const [updated] = await IndexTableModel.update(changes, { where: { id, pollOwner: owner, changeColumn } });
    return updated === 1;
  },

  async touchPolls(ids: string[], owner: string, now: Date): Promise<void> {
    if (ids.length > 0) await IndexTableModel.update({ pollHeartbeatAt: now }, { where: { id: ids, pollOwner: owner } });
  },

  /**
   * Connections with streamed tables whose stream is due (never read, or let go and its retry time passed) and that
   * no live process reads (no owner, or its heartbeat older than `staleBefore`).
   */
  async dueStreams(now: Date, staleBefore: Date): Promise<string[]> {
    const rows = await IndexTableModel.findAll({
      attributes: ['connectionId', 'pollOwner', 'pollHeartbeatAt', 'nextPollAt'],
      where: { changeStream: true },
    });
    const byConnection = new Map<string, boolean>();
    for (const row of rows) {
      const free = row.pollOwner === null || row.pollHeartbeatAt === null || row.pollHeartbeatAt < staleBefore;
      const due = row.nextPollAt === null || row.nextPollAt <= now;
      byConnection.set(row.connectionId, (byConnection.get(row.connectionId) ?? true) && free && due);
    }
    return [...byConnection].filter(([, due]) => due).map(([id]) => id);
  },

  /**
   * Claims every streamed table of a connection for `owner`, each by a conditional update on what was read (as a
   * poll is claimed): the stream runs only if all were won; a partial claim (another process raced) is handed back.
   */
  async claimStream(connectionId: string, owner: string, now: Date, staleBefore: Date): Promise<IndexTableRecord[] | null> {
    const seen = (await IndexTableModel.findAll({ where: { connectionId, changeStream: true }, order: [['id', 'ASC']] })).map((row) => row.get({ plain: true }));
    if (seen.length === 0) return null;
    const won: string[] = [];
    for (const table of seen) {
      const free = table.pollOwner === null || table.pollHeartbeatAt === null || table.pollHeartbeatAt < staleBefore || table.pollOwner === owner;
      if (!free) break;
      const [updated] = await IndexTableModel.update(
        { pollOwner: owner, pollHeartbeatAt: now },
        { where: { id: table.id, changeStream: true, pollOwner: table.pollOwner, pollHeartbeatAt: table.pollHeartbeatAt } },
      );
      if (updated !== 1) break;
      won.push(table.id);
    }
    if (won.length < seen.length) {
      await this.releasePolls(won, owner);
      return null;
    }
    return seen.map((table) => ({ ...table, pollOwner: owner, pollHeartbeatAt: now }));
  },

  /** Stores a stream's position on its tables while `owner` holds them; false when it no longer does. */
  async streamProgress(ids: string[], owner: string, changes: IndexTableChanges): Promise<boolean> {
    const [updated] = await IndexTableModel.update(changes, { where: { id: ids, pollOwner: owner, changeStream: true } });
    return updated === ids.length;
  },

  /** Hands polls back (graceful stop, or a poll ended): any process may claim them when they are next due. */
  async releasePolls(ids: string[], owner: string, changes: IndexTableChanges = {}): Promise<void> {
    if (ids.length > 0) await IndexTableModel.update({ ...changes, pollOwner: null, pollHeartbeatAt: null }, { where: { id: ids, pollOwner: owner } });
  },

  /** Removes tables from the index's records (their rows are deleted from the index by the caller). */
  async removeExcept(connectionId: string, keepTableNames: string[]): Promise<IndexTableRecord[]> {
    const gone = await IndexTableModel.findAll({ where: { connectionId, tableName: { [Op.notIn]: keepTableNames } } });
    if (gone.length > 0) await IndexTableModel.destroy({ where: { id: gone.map((row) => row.id) } });
    return gone.map((row) => row.get({ plain: true }));
  },
};

export type IndexTableRepository = typeof indexTableRepository;
