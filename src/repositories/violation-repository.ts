import { Op, literal, type InferAttributes } from 'sequelize';
import { RateLimitViolationModel } from '../models/index.js';

export type ViolationRecord = InferAttributes<RateLimitViolationModel>;

export const violationRepository = {
  async start(row: Omit<ViolationRecord, 'id'>): Promise<void> {
    await RateLimitViolationModel.create(row);
  },

  /** Counts one more refused request against the key's block that is in force at `at`. */
  async addAffected(keyId: string, at: Date): Promise<void> {
    const current = await RateLimitViolationModel.findOne({
      where: { keyId, startedAt: { [Op.lte]: at }, blockedUntil: { [Op.gt]: at } },
      order: [['startedAt', 'DESC']],
    });
    if (current) await current.update({ affectedRequests: literal('affected_requests + 1') as unknown as number });
  },

  async listSince(keyId: string, since: Date): Promise<ViolationRecord[]> {
    const rows = await RateLimitViolationModel.findAll({ where: { keyId, startedAt: { [Op.gte]: since } }, order: [['startedAt', 'ASC']] });
    return rows.map((row) => row.get({ plain: true }));
  },
};

export type ViolationRepository = typeof violationRepository;
