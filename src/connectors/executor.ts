/**
 * Opens an executor for a connection's settings: checks the host against the connection policy first (no socket is
 * opened for a refused host), then builds the engine's pool on the checked address.
 */
import { resolveAllowedHost, type HostPolicy, type LookupAll } from './host-policy.js';
import { createMysqlExecutor, quoteMysqlIdent } from './mysql.js';
import { createPostgresExecutor, quotePostgresIdent } from './postgres.js';
import { createSqliteExecutor, quoteSqliteIdent } from './sqlite.js';
import {
  DEFAULT_POOL_OPTIONS,
  type ConnectionSettings,
  type Engine,
  type PooledExecutor,
  type PoolOptions,
  type SqlExecutor,
} from './types.js';

export interface ExecutorOptions extends Partial<PoolOptions> {
  hostPolicy: HostPolicy;
  /** DNS resolver override (tests). */
  lookup?: LookupAll;
}

/** Quoting and placeholders of each engine, known without a connection. */
export const DIALECTS: Record<Engine, Pick<SqlExecutor, 'quoteIdent' | 'placeholder'>> = {
  postgres: { quoteIdent: quotePostgresIdent, placeholder: (n) => `$${n}` },
  mysql: { quoteIdent: quoteMysqlIdent, placeholder: () => '?' },
  sqlite: { quoteIdent: quoteSqliteIdent, placeholder: () => '?' },
};

export const DEFAULT_PORTS: Record<Exclude<Engine, 'sqlite'>, number> = { postgres: 5432, mysql: 3306 };

export async function createExecutor(settings: ConnectionSettings, options: ExecutorOptions): Promise<PooledExecutor> {
  const pool: PoolOptions = {
    max: options.max ?? DEFAULT_POOL_OPTIONS.max,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_POOL_OPTIONS.connectTimeoutMs,
  };
  if (settings.engine === 'sqlite') return createSqliteExecutor(settings, pool);

  const port = settings.port ?? DEFAULT_PORTS[settings.engine];
  const target = await resolveAllowedHost(settings.host ?? '', port, options.hostPolicy, options.lookup);
  return settings.engine === 'postgres'
    ? createPostgresExecutor(settings, target, pool)
    : createMysqlExecutor(settings, target, pool);
}
