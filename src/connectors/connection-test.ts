/**
 * testDatabaseConnection, and the check createDatabase/updateDatabase run before saving: connect and run one
 * trivial read-only query. A failure is a result, not an exception.
 */
import { toConnectorError, type ConnectorErrorCode } from './errors.js';
import { createExecutor, type ExecutorOptions } from './executor.js';
import {
  DEFAULT_POOL_OPTIONS,
  type ConnectionSettings,
  type Engine,
  type PooledExecutor,
  type SqlExecutor,
} from './types.js';

/** The `data` of ConnectionTestResponse. */
export interface ConnectionTestResult {
  ok: boolean;
  latencyMs: number;
  serverVersion: string | null;
  testedAt: string;
  error: { code: ConnectorErrorCode; message: string } | null;
}

const VERSION_SQL: Record<Engine, string> = {
  postgres: "SELECT current_setting('server_version') AS version",
  mysql: 'SELECT VERSION() AS version',
  sqlite: 'SELECT sqlite_version() AS version',
};

/** "PostgreSQL 15.20", "MariaDB 10.11.19", "MySQL 8.0.36", "SQLite 3.52.0". */
export function describeServerVersion(engine: Engine, raw: string): string {
  const number = /^\d+(\.\d+)*/.exec(raw.trim())?.[0] ?? raw.trim();
  if (engine === 'postgres') return `PostgreSQL ${number}`;
  if (engine === 'sqlite') return `SQLite ${number}`;
  return `${/mariadb/i.test(raw) ? 'MariaDB' : 'MySQL'} ${number}`;
}

function elapsed(start: bigint): number {
  return Math.max(0, Math.round(Number(process.hrtime.bigint() - start) / 1e6));
}

/** Runs the trivial query on an executor that is already open (a pooled one, say). */
export async function testExecutor(executor: SqlExecutor, timeoutMs: number): Promise<ConnectionTestResult> {
  const testedAt = new Date().toISOString();
  const start = process.hrtime.bigint();
  try {
    const rows = await executor.query<{ version: unknown }>(VERSION_SQL[executor.engine], [], { timeoutMs });
    const raw = String(rows[0]?.version ?? '');
    const serverVersion = describeServerVersion(executor.engine, raw);
    return { ok: true, latencyMs: elapsed(start), serverVersion, testedAt, error: null };
  } catch (err) {
    const error = toConnectorError(err, { engine: executor.engine, timeoutMs }).toSafeError();
    return { ok: false, latencyMs: elapsed(start), serverVersion: null, testedAt, error };
  }
}

/**
 * Opens a throwaway one-connection executor with `settings`, runs the trivial query and closes it.
 * Policy refusals (HOST_NOT_ALLOWED) come back as `error` too; `isPolicyError(error.code)` tells them apart.
 */
export async function testConnection(settings: ConnectionSettings, options: ExecutorOptions): Promise<ConnectionTestResult> {
  const testedAt = new Date().toISOString();
  const start = process.hrtime.bigint();
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_POOL_OPTIONS.connectTimeoutMs;
  let executor: PooledExecutor;
  try {
    executor = await createExecutor(settings, { ...options, max: 1 });
  } catch (err) {
    const error = toConnectorError(err, { engine: settings.engine, timeoutMs }).toSafeError();
    return { ok: false, latencyMs: elapsed(start), serverVersion: null, testedAt, error };
  }
  try {
    const result = await testExecutor(executor, timeoutMs);
    return { ...result, latencyMs: elapsed(start), testedAt };
  } finally {
    await executor.close().catch(() => undefined);
  }
}
