import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const postgresAdminUrl = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const mysqlUrl = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/**
 * A fresh, empty PostgreSQL database for one test file, dropped by the returned function. A PostgreSQL that
 * cannot be reached fails the test with the reason (never a silent skip: CI must see it).
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `quarry_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`PostgreSQL is needed at ${postgresAdminUrl} (set PG_URL): ${(error as Error).message}`);
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
