import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Every account has a plan (free, pro, enterprise); a key's tier may be at most its account's plan. Until now the
 * tier was whatever a key said, so the data holds no record of what anyone is entitled to: an existing account
 * keeps the best tier among its active keys as its plan, so nobody loses service at the upgrade. The operator
 * reviews them (`npm run user -- plans`) and lowers what was self-chosen (`npm run user -- plan <email> free`).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.transaction(async (transaction) => {
    await q.addColumn('users', 'plan', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'free' }, { transaction });
    for (const tier of ['pro', 'enterprise']) {
      await q.sequelize.query(
        `UPDATE users SET plan = :tier WHERE id IN (SELECT user_id FROM api_keys WHERE revoked_at IS NULL AND tier = :tier)`,
        { replacements: { tier }, transaction },
      );
    }
  });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeColumn('users', 'plan');
}
