import { Op, type InferAttributes } from 'sequelize';
import { DatabaseConnectionModel } from '../models/index.js';

export type DatabaseConnectionRecord = InferAttributes<DatabaseConnectionModel>;
export type NewDatabaseConnection = Omit<DatabaseConnectionRecord, 'createdAt' | 'updatedAt' | 'schemaCache' | 'schemaDiscoveredAt' | 'indexEnabled' | 'syncIntervalMinutes' | 'nextSyncAt'>
  & Partial<Pick<DatabaseConnectionRecord, 'indexEnabled' | 'syncIntervalMinutes' | 'nextSyncAt'>>;
export type DatabaseConnectionChanges = Partial<Omit<DatabaseConnectionRecord, 'id' | 'userId' | 'engine' | 'createdAt' | 'updatedAt'>>;

const plain = (model: DatabaseConnectionModel | null): DatabaseConnectionRecord | null => (model ? model.get({ plain: true }) : null);

export const databaseConnectionRepository = {
  async create(record: NewDatabaseConnection): Promise<DatabaseConnectionRecord> {
    return plain(await DatabaseConnectionModel.create(record))!;
  },

  /** Only the owner's connection: another user's id answers null, exactly like an unknown id. */
  async findOwned(userId: string, id: string): Promise<DatabaseConnectionRecord | null> {
    // Ids never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (id.includes('\0')) return null;
    return plain(await DatabaseConnectionModel.findOne({ where: { id, userId } }));
  },

  async findById(id: string): Promise<DatabaseConnectionRecord | null> {
    return plain(await DatabaseConnectionModel.findByPk(id));
  },

  async listOwned(userId: string, environment?: 'live' | 'test'): Promise<DatabaseConnectionRecord[]> {
    const rows = await DatabaseConnectionModel.findAll({
      where: { userId, ...(environment && { environment }) },
      order: [['createdAt', 'DESC'], ['id', 'ASC']],
    });
    return rows.map((row) => row.get({ plain: true }));
  },

  /** Every connection of one engine, of every user (SQLite files are adopted into their owners' folders at start). */
  async listByEngine(engine: DatabaseConnectionRecord['engine']): Promise<DatabaseConnectionRecord[]> {
    const rows = await DatabaseConnectionModel.findAll({ where: { engine }, order: [['createdAt', 'ASC'], ['id', 'ASC']] });
    return rows.map((row) => row.get({ plain: true }));
  },

  async countOwned(userId: string): Promise<number> {
    return DatabaseConnectionModel.count({ where: { userId } });
  },

  async listIdsForUser(userId: string): Promise<string[]> {
    const rows = await DatabaseConnectionModel.findAll({ where: { userId }, attributes: ['id'], order: [['createdAt', 'ASC'], ['id', 'ASC']] });
    return rows.map((row) => row.id);
  },

  async update(id: string, changes: DatabaseConnectionChanges): Promise<DatabaseConnectionRecord | null> {
    await DatabaseConnectionModel.update(changes, { where: { id } });
    return this.findById(id);
  },

  async delete(id: string): Promise<void> {
    await DatabaseConnectionModel.destroy({ where: { id } });
  },

  /** Connections whose index sync is due (indexing on, a schedule, next_sync_at passed or never set). */
  async dueForSync(now: Date, limit: number): Promise<DatabaseConnectionRecord[]> {
    const rows = await DatabaseConnectionModel.findAll({
      where: {
        indexEnabled: true,
        syncIntervalMinutes: { [Op.ne]: null },
        [Op.or]: [{ nextSyncAt: null }, { nextSyncAt: { [Op.lte]: now } }],
      },
      order: [['nextSyncAt', 'ASC'], ['id', 'ASC']],
      limit,
    });
    return rows.map((row) => row.get({ plain: true }));
  },

  /**
   * Moves a connection's next scheduled sync from `seen` to `next`; true for the one process whose update took
   * (the one that then queues the sync), false when another process moved it first.
   */
  async claimScheduledSync(id: string, seen: Date | null, next: Date): Promise<boolean> {
    const [updated] = await DatabaseConnectionModel.update({ nextSyncAt: next }, { where: { id, nextSyncAt: seen }, silent: true });
    return updated === 1;
  },
};

export type DatabaseConnectionRepository = typeof databaseConnectionRepository;
