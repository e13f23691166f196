import { Op } from 'sequelize';
import { SemanticVectorModel } from '../models/index.js';

/** What indexing needs to know about a stored vector to decide whether its row must be embedded again. */
export interface StoredVectorInfo {
  id: number;
  contentHash: string;
  providerId: string;
}

export interface NewVector {
  primaryKey: string;
  contentHash: string;
  providerId: string;
  vector: Buffer;
}

/** One page of a table's vectors, for the search cache. */
export interface VectorPageRow {
  id: number;
  primaryKey: string;
  vector: Buffer;
}

export const semanticVectorRepository = {
  /** Stored vectors of these rows (by primary key JSON). */
  async existing(connectionId: string, tableName: string, primaryKeys: string[]): Promise<Map<string, StoredVectorInfo>> {
    if (primaryKeys.length === 0) return new Map();
    const rows = await SemanticVectorModel.findAll({
      attributes: ['id', 'primaryKey', 'contentHash', 'providerId'],
      where: { connectionId, tableName, primaryKey: primaryKeys },
      raw: true,
    });
    return new Map(rows.map((row) => [row.primaryKey, { id: row.id, contentHash: row.contentHash, providerId: row.providerId }]));
  },

  /**
   * Writes one batch in one transaction: `fresh` vectors replace the rows `replaceIds` (changed rows) or are new,
   * and `seenIds` (unchanged rows) are marked as seen by `jobId`.
   */
  async writeBatch(connectionId: string, tableName: string, jobId: string, fresh: NewVector[], replaceIds: number[], seenIds: number[], now: Date): Promise<void> {
    const sequelize = SemanticVectorModel.sequelize!;
    await sequelize.transaction(async (transaction) => {
      if (replaceIds.length > 0) await SemanticVectorModel.destroy({ where: { id: replaceIds }, transaction });
      if (fresh.length > 0) {
        await SemanticVectorModel.bulkCreate(
          fresh.map((vector) => ({ ...vector, connectionId, tableName, jobId, updatedAt: now })),
          { transaction },
        );
      }
      if (seenIds.length > 0) await SemanticVectorModel.update({ jobId }, { where: { id: seenIds }, transaction, silent: true });
    });
  },

  /** Removes rows `jobId` did not see: gone from the source table (or beyond the row limit). Returns how many. */
  async sweep(connectionId: string, tableName: string, jobId: string): Promise<number> {
    return SemanticVectorModel.destroy({ where: { connectionId, tableName, jobId: { [Op.ne]: jobId } } });
  },

  /** How many of a table's vectors this provider made. */
  async countFor(connectionId: string, tableName: string, providerId: string): Promise<number> {
    return SemanticVectorModel.count({ where: { connectionId, tableName, providerId } });
  },

  /** Vectors of one table and provider in id order, `limit` at a time after `afterId` (bounded memory while loading). */
  async page(connectionId: string, tableName: string, providerId: string, afterId: number, limit: number): Promise<VectorPageRow[]> {
    return SemanticVectorModel.findAll({
      attributes: ['id', 'primaryKey', 'vector'],
      where: { connectionId, tableName, providerId, id: { [Op.gt]: afterId } },
      order: [['id', 'ASC']],
      limit,
      raw: true,
    }) as unknown as Promise<VectorPageRow[]>;
  },
};

export type SemanticVectorRepository = typeof semanticVectorRepository;
