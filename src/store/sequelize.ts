import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { Sequelize } from 'sequelize';
import type { Config } from '../config/config.js';

/** Quarry's own store: a SQLite file by default, PostgreSQL when DATABASE_URL says so. */
export function createSequelize(config: Pick<Config, 'databaseUrl' | 'storeKind'>): Sequelize {
  if (config.storeKind === 'postgres') {
    return new Sequelize(config.databaseUrl, {
      dialect: 'postgres',
      logging: false,
      pool: { max: 10, min: 0, idle: 10_000 },
    });
  }
  const storage = config.databaseUrl.slice('sqlite:'.length);
  if (storage !== ':memory:') {
    mkdirSync(dirname(storage), { recursive: true, mode: 0o700 });
    // The store holds password hashes and encrypted credentials: only Quarry's own user may read it. SQLite gives
    // its -wal and -shm files the mode of the database file, so they are private too.
    if (!existsSync(storage)) closeSync(openSync(storage, 'a', 0o600));
  }
  const sequelize = new Sequelize({ dialect: 'sqlite', storage, logging: false });
  // WAL lets readers proceed while the batched writer commits; busy_timeout waits instead of failing on a lock.
  sequelize.addHook('afterConnect', async (connection: unknown) => {
    const db = connection as { run(sql: string, cb: (err: Error | null) => void): void };
    for (const pragma of ['PRAGMA journal_mode=WAL', 'PRAGMA busy_timeout=5000', 'PRAGMA foreign_keys=ON']) {
      await new Promise<void>((resolve, reject) => db.run(pragma, (err) => (err ? reject(err) : resolve())));
    }
  });
  return sequelize;
}
