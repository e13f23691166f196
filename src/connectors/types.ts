/**
 * The seam between Quarry and a user's database. Everything above this file (search, schema discovery,
 * services) talks to a connected database only through these types, whatever its engine.
 */
import type { components } from '../../generated/openapi.js';

export type Engine = components['schemas']['DatabaseEngine'];
export type TableSchema = components['schemas']['TableSchema'];

/** Settings needed to open a connection; the password is already decrypted. */
export interface ConnectionSettings {
  engine: Engine;
  host: string | null;
  port: number | null;
  /** Database name, or for sqlite an absolute file path already checked against the SQLite directory policy. */
  database: string;
  username: string | null;
  password: string | null;
  ssl: boolean;
  /** Optional allow-list of tables to expose (`table` or `schema.table`). */
  tables: string[] | null;
}

export interface QueryOptions {
  /** Statement timeout; the engine cancels the statement after it. */
  timeoutMs: number;
}

/**
 * Runs read-only SQL on one connected database. Every call is read-only (a read-only transaction or session)
 * and bounded by `timeoutMs`. Parameters are always bound, never interpolated.
 */
export interface SqlExecutor {
  readonly engine: Engine;
  /** Quotes an identifier by the engine's rules ("x" for postgres and sqlite, `x` for mysql). */
  quoteIdent(name: string): string;
  /** Positional placeholder for the n-th (1-based) parameter: $1 for postgres, ? elsewhere. */
  placeholder(n: number): string;
  query<Row = Record<string, unknown>>(sql: string, params: unknown[], options: QueryOptions): Promise<Row[]>;
}

/** Pool occupancy, the `pool` object of getDatabaseStatus. */
export interface PoolStats {
  open: boolean;
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** An executor that owns a bounded pool of connections to one database. */
export interface PooledExecutor extends SqlExecutor {
  stats(): PoolStats;
  /** Closes every connection; later queries fail. Idempotent. */
  close(): Promise<void>;
}

/** Bounds of one pool. */
export interface PoolOptions {
  /** Most connections open at once (default 5). */
  max: number;
  /** Time allowed to open a connection or to wait for a free one (default 3000 ms). */
  connectTimeoutMs: number;
}

export const DEFAULT_POOL_OPTIONS: PoolOptions = { max: 5, connectTimeoutMs: 3000 };
