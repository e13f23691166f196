import { literal, UniqueConstraintError, type InferAttributes } from 'sequelize';
import { ApiKeyModel } from '../models/index.js';

export type ApiKeyRecord = InferAttributes<ApiKeyModel>;
/** What only a publishable key has (null or absent on a secret key). */
type PublishableFields = 'kind' | 'publishableKey' | 'allowedOrigins' | 'databaseIds' | 'tableNames' | 'requestsPerIpPerHour';
export type NewApiKey = Omit<ApiKeyRecord, 'createdAt' | 'updatedAt' | 'revokedAt' | 'replacedById' | 'lastUsedAt' | 'usageCount' | 'initialForUser' | PublishableFields> & {
  initialForUser?: string | null;
} & Partial<Pick<ApiKeyRecord, PublishableFields>>;
/** What an update may change. */
export type ApiKeyChanges = Partial<Pick<ApiKeyRecord, 'name' | 'tier' | 'permissions' | 'expiresAt' | 'revokedAt' | 'replacedById'
  | 'allowedOrigins' | 'databaseIds' | 'tableNames' | 'requestsPerIpPerHour'>>;

/** Thrown when the user already has an initial key. */
export class InitialKeyExistsError extends Error {}

const plain = (model: ApiKeyModel | null): ApiKeyRecord | null => (model ? model.get({ plain: true }) : null);

export const apiKeyRepository = {
  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    try {
      return plain(await ApiKeyModel.create(key))!;
    } catch (error) {
      if (error instanceof UniqueConstraintError && key.initialForUser) throw new InitialKeyExistsError();
      throw error;
    }
  },

  async findByPublicId(publicId: string): Promise<ApiKeyRecord | null> {
    return plain(await ApiKeyModel.findOne({ where: { publicId } }));
  },

  /** Only the owner's key: another user's id answers null, exactly like an unknown id. */
  async findOwned(userId: string, id: string): Promise<ApiKeyRecord | null> {
    // Ids never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (id.includes('\0')) return null;
    return plain(await ApiKeyModel.findOne({ where: { id, userId } }));
  },

  async listOwned(userId: string): Promise<ApiKeyRecord[]> {
    const rows = await ApiKeyModel.findAll({ where: { userId }, order: [['createdAt', 'DESC'], ['id', 'ASC']] });
    return rows.map((row) => row.get({ plain: true }));
  },

  async countOwned(userId: string): Promise<number> {
    return ApiKeyModel.count({ where: { userId } });
  },

  async update(id: string, changes: ApiKeyChanges): Promise<ApiKeyRecord | null> {
    await ApiKeyModel.update(changes, { where: { id } });
    return plain(await ApiKeyModel.findByPk(id));
  },

  /** Replaces a key in one transaction: the new key exists exactly when the old one is revoked. */
  async replace(oldId: string, next: NewApiKey, at: Date): Promise<ApiKeyRecord> {
    const sequelize = ApiKeyModel.sequelize!;
    return sequelize.transaction(async (transaction) => {
      const created = await ApiKeyModel.create(next, { transaction });
      await ApiKeyModel.update({ revokedAt: at, replacedById: next.id }, { where: { id: oldId }, transaction });
      return created.get({ plain: true });
    });
  },

  /** Adds batched usage: one UPDATE per key per flush, never one per request. */
  async addUsage(id: string, requests: number, lastUsedAt: Date): Promise<void> {
    await ApiKeyModel.update(
      { usageCount: literal(`usage_count + ${Math.trunc(requests)}`) as unknown as number, lastUsedAt },
      { where: { id }, silent: true },
    );
  },

};

export type ApiKeyRepository = typeof apiKeyRepository;
