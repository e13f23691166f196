import { Sequelize } from 'sequelize';

function openStore(databaseUrl: string): Sequelize {
  return databaseUrl.startsWith('sqlite:')
    ? new Sequelize({ dialect: 'sqlite', storage: databaseUrl.slice('sqlite:'.length), logging: false })
    : new Sequelize(databaseUrl, { logging: false });
}

/**
 * What `npm run user -- plan|role` does, written straight into a spawned server's store (benchmarks and fault tests
 * set up accounts before load, where starting the operator command each time would cost seconds).
 */
export async function setAccount(databaseUrl: string, email: string, changes: { plan?: 'free' | 'pro' | 'enterprise'; role?: 'user' | 'admin' }): Promise<void> {
  const sequelize = openStore(databaseUrl);
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

/** Gives a key custom limits far above what a benchmark sends, so the limiter decides every request but never refuses. */
export async function liftKeyLimits(databaseUrl: string, keyId: string): Promise<void> {
  const sequelize = openStore(databaseUrl);
  await sequelize.query('UPDATE api_keys SET custom_limits = :limits WHERE id = :id', {
    replacements: { id: keyId, limits: JSON.stringify({ requestsPerHour: 1e9, burstLimit: 1e9, concurrentConnections: 1000 }) },
  });
  await sequelize.close();
}
