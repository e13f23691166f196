import { Op, UniqueConstraintError, type InferAttributes } from 'sequelize';
import { IndexTableModel } from '../models/index.js';

export type IndexTableRecord = InferAttributes<IndexTableModel>;
export type IndexTableChanges = Partial<Omit<IndexTableRecord, 'id' | 'connectionId' | 'tableName' | 'createdAt' | 'updatedAt'>>;

const plain = (model: IndexTableModel | null): IndexTableRecord | null => (model ? model.get({ plain: true }) : null);

/** Which tables are in the search index (issue 27): the store's side of src/search-index. */
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

  /** Removes tables from the index's records (their rows are deleted from the index by the caller). */
  async removeExcept(connectionId: string, keepTableNames: string[]): Promise<IndexTableRecord[]> {
    const gone = await IndexTableModel.findAll({ where: { connectionId, tableName: { [Op.notIn]: keepTableNames } } });
    if (gone.length > 0) await IndexTableModel.destroy({ where: { id: gone.map((row) => row.id) } });
    return gone.map((row) => row.get({ plain: true }));
  },
};

export type IndexTableRepository = typeof indexTableRepository;
