/**
 * PostgreSQL executor over a bounded pg Pool. Each query runs in its own `BEGIN READ ONLY` transaction with
 * `SET LOCAL statement_timeout`, sent with the statement and its COMMIT in one round trip through the extended
 * protocol (which refuses a second statement in the text).
 */
import pg from 'pg';
import net from 'node:net';
import { CLIENT_GRACE_MS, CLOSE_GRACE_MS, closeWithin, SocketSet, withDeadline } from './deadline.js';
import { poolClosedError, toConnectorError } from './errors.js';
import type { ResolvedHost } from './host-policy.js';
import { queryInReadOnlyTransaction } from './postgres-pipeline.js';
import { assertReadOnlySql } from './read-only-guard.js';
import type { ConnectionSettings, PooledExecutor, PoolOptions, PoolStats, QueryOptions } from './types.js';

export function quotePostgresIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function timeoutSetting(timeoutMs: number): number {
  return Math.max(1, Math.ceil(timeoutMs));
}

/**
 * The settings of a replication connection to the same server (stream mode): the address the host policy checked,
 * TLS as the executor's, and no fallback to Quarry's own PGPASSWORD.
 */
export function replicationClientConfig(settings: ConnectionSettings, target: ResolvedHost): pg.ClientConfig {
  return {
    host: target.address,
    port: target.port,
    database: settings.database,
    user: settings.username ?? undefined,
    password: () => settings.password ?? '',
    ssl: settings.ssl ? { rejectUnauthorized: true, ...(target.servername ? { servername: target.servername } : {}) } : false,
    application_name: 'quarry_stream',
    connectionTimeoutMillis: 10_000,
  };
}

/** Opens no connection until the first query. `target` is the address the host policy checked. */
export function createPostgresExecutor(
  settings: ConnectionSettings,
  target: ResolvedHost,
  options: PoolOptions,
): PooledExecutor {
  const sockets = new SocketSet();
  const pool = new pg.Pool({
    // pg connects the socket it is given (and wraps it in TLS when ssl is on); kept, so a hung server can be cut off.
    stream: () => sockets.add(new net.Socket()),
    host: target.address,
    port: target.port,
    database: settings.database,
    user: settings.username ?? undefined,
    // A function, so pg never falls back to PGPASSWORD or ~/.pgpass of Quarry's own environment.
    password: () => settings.password ?? '',
    ssl: settings.ssl
      ? { rejectUnauthorized: true, ...(target.servername ? { servername: target.servername } : {}) }
      : false,
    max: options.max,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    application_name: 'quarry',
    // No session-level settings (`options`, startup parameters): PgBouncer in transaction mode rejects them and
    // would share them between clients. Every query gets its own read-only transaction instead.
  });
  // An idle connection that dies (server restart) is dropped by the pool; without a listener it would crash us.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  let closed = false;

  /**
   * Runs the statement in its read-only transaction, committed in the same round trip, and resolves with its rows.
   * `ended` settles when the transaction is over (at once on success; after a ROLLBACK when the statement failed),
   * and only then does the connection go back to the pool.
   */
  function run<Row>(
    client: pg.PoolClient,
    sql: string,
    params: unknown[],
    timeoutMs: number,
    state: { healthy: boolean },
  ): { rows: Promise<Row[]>; ended: Promise<void> } {
    // BEGIN READ ONLY, SET LOCAL statement_timeout, the statement and COMMIT in one round trip (postgres-pipeline.ts).
    const rows = queryInReadOnlyTransaction<Row>(client, sql, params, timeoutSetting(timeoutMs));
    // A failed statement leaves its transaction open and aborted (the server skipped the COMMIT): roll it back.
    const ended = rows.then(
      () => undefined,
      () => client.query('ROLLBACK'),
    ).then(() => undefined, () => {
      // A transaction that cannot be ended leaves the connection in an unknown state: it is discarded.
      state.healthy = false;
    });
    return { rows, ended };
  }

  return {
    engine: 'postgres',
    quoteIdent: quotePostgresIdent,
    placeholder: (n) => `$${n}`,

    async query<Row = Record<string, unknown>>(sql: string, params: unknown[], { timeoutMs }: QueryOptions): Promise<Row[]> {
      assertReadOnlySql(sql, 'postgres');
      if (closed) throw poolClosedError('postgres');
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw toConnectorError(err, { engine: 'postgres', timeoutMs: options.connectTimeoutMs });
      }
      const state = { healthy: true, released: false };
      const release = () => {
        if (state.released) return;
        state.released = true;
        client.release(state.healthy ? undefined : true);
      };
      const work = run<Row>(client, sql, params, timeoutMs, state);
      // Back to the pool once the transaction has ended (or at once if the deadline gave up on the connection).
      void work.ended.then(release);
      try {
        return await withDeadline(work.rows, timeoutMs + CLIENT_GRACE_MS, () => {
          state.healthy = false;
          release();
        });
      } catch (err) {
        throw toConnectorError(err, { engine: 'postgres', timeoutMs });
      }
    },

    stats(): PoolStats {
      return {
        open: !closed,
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
        max: options.max,
      };
    },

    /** Ends every connection; one the server does not let go of within CLOSE_GRACE_MS is cut. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeWithin(pool.end(), CLOSE_GRACE_MS, () => sockets.destroyAll());
    },
  };
}
