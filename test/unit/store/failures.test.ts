import { ConnectionAcquireTimeoutError, ConnectionRefusedError, DatabaseError, Sequelize, UniqueConstraintError } from 'sequelize';
import { describe, expect, it } from 'vitest';
import { classifyStoreFailure } from '../../../src/store/failures.js';

const databaseError = (code: string | undefined, message = 'failed') =>
  new DatabaseError(Object.assign(new Error(message), { code, sql: 'INSERT ...', parameters: {} }) as never);

describe('classifyStoreFailure', () => {
  it('when the store is down, unreachable, out of connections, shutting down or busy, then unavailable (retried, 503)', () => {
    for (const error of [
      new ConnectionRefusedError(new Error('connect ECONNREFUSED 127.0.0.1:5499')),
      new ConnectionAcquireTimeoutError(new Error('acquire timeout')),
      databaseError('53300', 'sorry, too many clients already'),
      databaseError('57P01', 'terminating connection due to administrator command'),
      databaseError('08006'),
      databaseError('40P01', 'deadlock detected'),
      databaseError('SQLITE_BUSY', 'database is locked'),
      databaseError(undefined, 'Connection terminated unexpectedly'),
    ]) expect(classifyStoreFailure(error), String(error)).toBe('unavailable');
  });

  it('when a row violates a constraint or holds data the store cannot take, then rejected (dropped, never retried)', () => {
    for (const error of [
      new UniqueConstraintError({ message: 'duplicate' }),
      databaseError('23502', 'null value in column violates not-null constraint'),
      databaseError('22P05', 'unsupported Unicode escape sequence'),
      databaseError('SQLITE_CONSTRAINT', 'NOT NULL constraint failed'),
    ]) expect(classifyStoreFailure(error), String(error)).toBe('rejected');
  });

  it('when the error is anything else, then other (a bug, answered 500)', () => {
    expect(classifyStoreFailure(new TypeError('x is undefined'))).toBe('other');
    expect(classifyStoreFailure(databaseError('42P01', 'relation does not exist'))).toBe('other');
  });

  it('when a real SQLite store refuses a duplicate and a real PostgreSQL port refuses connections, then rejected and unavailable', async () => {
    const sqlite = new Sequelize({ dialect: 'sqlite', storage: ':memory:', logging: false });
    await sqlite.query('CREATE TABLE t (id TEXT PRIMARY KEY)');
    await sqlite.query("INSERT INTO t VALUES ('a')");
    const duplicate = await sqlite.query("INSERT INTO t VALUES ('a')").catch((error: unknown) => error);
    expect(classifyStoreFailure(duplicate)).toBe('rejected');
    await sqlite.close();
    const closed = new Sequelize('postgres://postgres@127.0.0.1:1/none', { logging: false, pool: { max: 1, acquire: 2000 } });
    const refused = await closed.query('SELECT 1').catch((error: unknown) => error);
    expect(classifyStoreFailure(refused)).toBe('unavailable');
    await closed.close();
  });
});
