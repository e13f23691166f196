import { Op, type InferAttributes } from 'sequelize';
import { SessionModel } from '../models/index.js';

export type SessionRecord = InferAttributes<SessionModel>;

export const sessionRepository = {
  async create(session: Pick<SessionRecord, 'id' | 'userId' | 'refreshJti' | 'expiresAt'>): Promise<void> {
    await SessionModel.create({ ...session, endedAt: null });
  },

  async findById(id: string): Promise<SessionRecord | null> {
    const model = await SessionModel.findByPk(id);
    return model ? model.get({ plain: true }) : null;
  },

  /** Moves the session to a new refresh token only if `expectedJti` is still current: a replayed token loses the race. */
  async rotateRefresh(id: string, expectedJti: string, nextJti: string): Promise<boolean> {
    const [count] = await SessionModel.update(
      { refreshJti: nextJti },
      { where: { id, refreshJti: expectedJti, endedAt: null } },
    );
    return count === 1;
  },

  async end(id: string, at: Date): Promise<void> {
    await SessionModel.update({ endedAt: at }, { where: { id, endedAt: null } });
  },

  async endAllForUser(userId: string, at: Date): Promise<void> {
    await SessionModel.update({ endedAt: at }, { where: { userId, endedAt: { [Op.is]: null } } });
  },
};

export type SessionRepository = typeof sessionRepository;
