/**
 * SQLite executor: a few handles on one file, each opened with OPEN_READONLY (no OPEN_CREATE, no OPEN_URI) and
 * `PRAGMA query_only`, so neither the file nor a temp table can be written. A statement that runs past its limit
 * is stopped with sqlite3_interrupt (db.interrupt()); each handle has its own, so one slow query never interrupts
 * another. Each handle also caps the size of any value SQLite builds (SQLITE_LIMIT_LENGTH): a generated column or
 * an expression that would make a huge value fails (SQLITE_TOOBIG) instead of allocating it in this process.
 */
import { stat } from 'node:fs/promises';
import sqlite3 from 'sqlite3';
import { MAX_SQLITE_VALUE_BYTES } from './bounded-values.js';
import { CLIENT_GRACE_MS, withDeadline } from './deadline.js';
import { poolClosedError, timeoutError, toConnectorError } from './errors.js';
import { assertReadOnlySql } from './read-only-guard.js';
import { PoolClosedError, ResourcePool } from './resource-pool.js';
import type { ConnectionSettings, PooledExecutor, PoolOptions, QueryOptions } from './types.js';

export function quoteSqliteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function openReadOnly(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(db)));
  });
}

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function all<Row>(db: sqlite3.Database, sql: string, params: unknown[]): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    db.all(sql, params, (err: Error | null, rows: unknown[]) => (err ? reject(err) : resolve(rows as Row[])));
  });
}

function closeHandle(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** Which file a path names now (device and inode); null when it names none. */
async function fileIdentity(file: string): Promise<string | null> {
  return stat(file).then((info) => `${info.dev}:${info.ino}`, () => null);
}

/** `settings.database` is the absolute path already checked by resolveSqlitePath. */
export function createSqliteExecutor(settings: ConnectionSettings, options: PoolOptions): PooledExecutor {
  // An open handle keeps reading the file it opened after an upload renames another over its name. The process that
  // took the upload closes its pool; any other process sharing the folder finds out here, before each query.
  const openedFile = new WeakMap<sqlite3.Database, string | null>();
  const handles = new ResourcePool<sqlite3.Database>({
    max: options.max,
    acquireTimeoutMs: options.connectTimeoutMs,
    async create() {
      // Named before opening: a replacement in between makes the handle look stale (reopened once), never current.
      const identity = await fileIdentity(settings.database);
      const db = await openReadOnly(settings.database);
      openedFile.set(db, identity);
      try {
        db.configure('limit', sqlite3.LIMIT_LENGTH, MAX_SQLITE_VALUE_BYTES);
        await exec(db, 'PRAGMA query_only = ON');
        db.configure('busyTimeout', Math.min(1000, options.connectTimeoutMs));
        return db;
      } catch (err) {
        await closeHandle(db);
        throw err;
      }
    },
    destroy: closeHandle,
  });

  async function acquire() {
    try {
      // Handles on a file since replaced are dropped (each at most once) until one reads the file the name holds now.
      for (let stale = 0; ; stale++) {
        const lease = await handles.acquire();
        if (stale > options.max || openedFile.get(lease.resource) === (await fileIdentity(settings.database))) return lease;
        lease.release(true);
      }
    } catch (err) {
      if (err instanceof PoolClosedError) throw poolClosedError('sqlite');
      throw toConnectorError(err, { engine: 'sqlite', timeoutMs: options.connectTimeoutMs });
    }
  }

  return {
    engine: 'sqlite',
    quoteIdent: quoteSqliteIdent,
    placeholder: () => '?',

    async query<Row = Record<string, unknown>>(sql: string, params: unknown[], { timeoutMs }: QueryOptions): Promise<Row[]> {
      assertReadOnlySql(sql, 'sqlite');
      const lease = await acquire();
      const db = lease.resource;
      let interrupted = false;
      let broken = false;
      const timer = setTimeout(() => {
        interrupted = true;
        db.interrupt();
      }, timeoutMs);
      timer.unref();
      try {
        return await withDeadline(all<Row>(db, sql, params), timeoutMs + CLIENT_GRACE_MS, () => {
          broken = true;
        });
      } catch (err) {
        if (interrupted) throw timeoutError({ engine: 'sqlite', timeoutMs }, err);
        throw toConnectorError(err, { engine: 'sqlite', timeoutMs });
      } finally {
        clearTimeout(timer);
        lease.release(broken);
      }
    },

    stats: () => handles.stats(),
    close: () => handles.close(),
  };
}
