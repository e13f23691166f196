/**
 * MySQL and MariaDB executor over a bounded mysql2 pool. Every connection is switched to
 * `SET SESSION TRANSACTION READ ONLY` before its first query and carries the server's statement limit
 * (MariaDB `max_statement_time` in seconds, MySQL `max_execution_time` in ms). Queries are server-side prepared
 * statements (`execute`), so parameters are bound, and a second statement is a syntax error.
 */
import net from 'node:net';
import mysql from 'mysql2/promise';
import { CLIENT_GRACE_MS, CLOSE_GRACE_MS, closeWithin, SocketSet, withDeadline } from './deadline.js';
import { poolClosedError, toConnectorError } from './errors.js';
import type { ResolvedHost } from './host-policy.js';
import { assertReadOnlySql } from './read-only-guard.js';
import type { ConnectionSettings, PooledExecutor, PoolOptions, PoolStats, QueryOptions } from './types.js';

type Flavor = 'mariadb' | 'mysql';

const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

interface SessionState {
  timeoutMs: number | null;
}

/** mysql2 keeps its counts on the core pool's queues; they are not in its typings. */
interface CorePoolQueues {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

export function quoteMysqlIdent(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}

export function createMysqlExecutor(
  settings: ConnectionSettings,
  target: ResolvedHost,
  options: PoolOptions,
): PooledExecutor {
  const sockets = new SocketSet();
  const pool = mysql.createPool({
    // `host` only names the server for TLS; the socket goes to the address the host policy checked.
    host: target.servername ?? target.address,
    port: target.port,
    stream: () => {
      const socket = sockets.add(net.connect({ host: target.address, port: target.port }));
      socket.setNoDelay(true);
      return socket;
    },
    user: settings.username ?? '',
    password: settings.password ?? '',
    database: settings.database,
    ...(settings.ssl ? { ssl: { rejectUnauthorized: true, verifyIdentity: true } } : {}),
    connectionLimit: options.max,
    maxIdle: options.max,
    idleTimeout: 30_000,
    waitForConnections: true,
    queueLimit: 0,
    connectTimeout: options.connectTimeoutMs,
    multipleStatements: false,
    supportBigNumbers: true,
    // The server caps prepared statements globally (max_prepared_stmt_count); keep our share small.
    maxPreparedStatements: 64,
    // A hostile server may ask the client for a local file (LOAD DATA LOCAL); never offer it.
    flags: ['-LOCAL_FILES'],
  });
  const sessions = new WeakMap<object, SessionState>();
  let flavor: Flavor | null = null;
  let serverLimits = true;
  let closed = false;

  async function acquire(): Promise<mysql.PoolConnection> {
    const pending = pool.getConnection();
    try {
      return await withDeadline(pending, options.connectTimeoutMs, () => {
        pending.then((conn) => conn.release(), () => undefined);
      });
    } catch (err) {
      throw toConnectorError(err, { engine: 'mysql', timeoutMs: options.connectTimeoutMs });
    }
  }

  async function prepareSession(conn: mysql.PoolConnection, timeoutMs: number): Promise<void> {
    let state = sessions.get(conn.connection);
    if (!state) {
      await conn.query('SET SESSION TRANSACTION READ ONLY');
      if (!flavor) {
        const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
        flavor = /mariadb/i.test(String(rows[0]?.v ?? '')) ? 'mariadb' : 'mysql';
      }
      state = { timeoutMs: null };
      sessions.set(conn.connection, state);
    }
    if (state.timeoutMs !== timeoutMs && serverLimits) {
      const limit = Math.max(1, Math.ceil(timeoutMs));
      try {
        await conn.query(
          flavor === 'mariadb'
            ? `SET SESSION max_statement_time = ${(limit / 1000).toFixed(3)}`
            : `SET SESSION max_execution_time = ${limit}`,
        );
      } catch (err) {
        // Servers before MySQL 5.7.8 / MariaDB 10.1 have no statement limit: the client deadline still applies.
        if ((err as { errno?: number }).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw err;
        serverLimits = false;
      }
      state.timeoutMs = timeoutMs;
    }
  }

  return {
    engine: 'mysql',
    quoteIdent: quoteMysqlIdent,
    placeholder: () => '?',

    async query<Row = Record<string, unknown>>(sql: string, params: unknown[], { timeoutMs }: QueryOptions): Promise<Row[]> {
      assertReadOnlySql(sql, 'mysql');
      if (closed) throw poolClosedError('mysql');
      const conn = await acquire();
      let done = false;
      const finish = (destroy: boolean) => {
        if (done) return;
        done = true;
        if (destroy) conn.destroy();
        else conn.release();
      };
      try {
        const rows = await withDeadline(
          (async () => {
            await prepareSession(conn, timeoutMs);
            const [result] = await conn.execute(sql, params as never);
            return result as unknown as Row[];
          })(),
          timeoutMs + CLIENT_GRACE_MS,
          () => finish(true),
        );
        finish(false);
        return rows;
      } catch (err) {
        finish(Boolean((err as { fatal?: boolean }).fatal));
        throw toConnectorError(err, { engine: 'mysql', timeoutMs });
      }
    },

    stats(): PoolStats {
      const core = pool.pool as unknown as CorePoolQueues;
      return {
        open: !closed,
        total: core._allConnections?.length ?? 0,
        idle: core._freeConnections?.length ?? 0,
        waiting: core._connectionQueue?.length ?? 0,
        max: options.max,
      };
    },

    /** Says goodbye to the server on every connection; one that does not answer within CLOSE_GRACE_MS is cut. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeWithin(pool.end(), CLOSE_GRACE_MS, () => sockets.destroyAll());
    },
  };
}
