import { Sequelize } from 'sequelize';

/**
 * What `npm run user -- plan|role` does, written straight into a spawned server's store (benchmarks and fault tests
 * set up accounts before load, where starting the operator command each time would cost seconds).
 */
export async function setAccount(databaseUrl: string, email: string, changes: { plan?: 'free' | 'pro' | 'enterprise'; role?: 'user' | 'admin' }): Promise<void> {
  const sequelize = databaseUrl.startsWith('sqlite:')
    ? new Sequelize({ dialect: 'sqlite', storage: databaseUrl.slice('sqlite:'.length), logging: false })
    : new Sequelize(databaseUrl, { logging: false });
  try {
    for (const [column, value] of Object.entries(changes)) {
      const [, meta] = await sequelize.query(`UPDATE users SET ${column === 'plan' ? 'plan' : 'role'} = :value WHERE email = :email`, { replacements: { value, email } });
      const changed = (meta as { changes?: number; rowCount?: number } | number | undefined);
      if (changed === 0 || (typeof changed === 'object' && (changed.changes ?? changed.rowCount) === 0)) throw new Error(`no account ${email} in ${databaseUrl}`);
    }
  } finally {
    await sequelize.close();
  }
}
