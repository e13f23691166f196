import { fn, col, Op, UniqueConstraintError, type InferAttributes } from 'sequelize';
import { UserModel } from '../models/index.js';
import { num } from './sql-helpers.js';
import { bucketExpression, type BucketUnit } from './time-buckets.js';

export type UserRecord = InferAttributes<UserModel>;
export type NewUser = Pick<UserRecord, 'id' | 'email' | 'name' | 'passwordHash' | 'role' | 'lastActiveAt'>;

/** Thrown when an email is already registered; the service turns it into EMAIL_TAKEN. */
export class DuplicateEmailError extends Error {}

const plain = (model: UserModel | null): UserRecord | null => (model ? model.get({ plain: true }) : null);

export const userRepository = {
  async create(user: NewUser): Promise<UserRecord> {
    try {
      return plain(await UserModel.create({ ...user, disabledAt: null }))!;
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new DuplicateEmailError();
      throw error;
    }
  },

  async findById(id: string): Promise<UserRecord | null> {
    // Ids never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (id.includes('\0')) return null;
    return plain(await UserModel.findByPk(id));
  },

  async findByEmail(email: string): Promise<UserRecord | null> {
    // Registered emails never hold NUL, and a NUL breaks the store's query (SQLite cuts the SQL text, PostgreSQL refuses 0x00).
    if (email.includes('\0')) return null;
    return plain(await UserModel.findOne({ where: { email } }));
  },

  async update(id: string, changes: Partial<Omit<UserRecord, 'id' | 'createdAt'>>): Promise<UserRecord | null> {
    try {
      await UserModel.update(changes, { where: { id } });
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new DuplicateEmailError();
      throw error;
    }
    return this.findById(id);
  },

  /** Accounts on a plan above free, oldest first (the operator's review of paid plans). */
  async listPaidPlans(): Promise<UserRecord[]> {
    const rows = await UserModel.findAll({ where: { plan: { [Op.ne]: 'free' } }, order: [['createdAt', 'ASC'], ['id', 'ASC']] });
    return rows.map((row) => row.get({ plain: true }));
  },

  async touch(id: string, at: Date): Promise<void> {
    await UserModel.update({ lastActiveAt: at }, { where: { id }, silent: true });
  },

  /** Registrations per time bucket in [from, to) (admin system overview); only buckets that have some. */
  async registrationsByBucket(from: Date, to: Date, unit: BucketUnit): Promise<Array<{ bucket: string; users: number }>> {
    const bucket = bucketExpression(UserModel.sequelize!, 'created_at', unit);
    const rows = (await UserModel.findAll({
      where: { createdAt: { [Op.gte]: from, [Op.lt]: to } },
      attributes: [[bucket, 'bucket'], [fn('COUNT', col('id')), 'users']],
      group: [bucket as never],
      order: [[bucket as never, 'ASC']],
      raw: true,
    })) as unknown as Array<Record<string, unknown>>;
    return rows.map((row) => ({ bucket: String(row.bucket), users: num(row.users) }));
  },
};

export type UserRepository = typeof userRepository;
