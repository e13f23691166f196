/**
 * Whether a file is an SQLite database Quarry can read, checked before an upload is kept (uploadSqliteFile): the
 * 16-byte header every SQLite 3 database starts with, then a read-only open that reads the schema, then SQLite's own
 * check of every page (`PRAGMA quick_check`): a file whose first pages are sound and the rest damaged would otherwise
 * be kept, connect and test fine, and fail each schema read and sync afterwards. Nothing in the file is run or
 * changed (OPEN_READONLY, no URI filenames, `PRAGMA query_only`).
 */
import { open } from 'node:fs/promises';
import sqlite3 from 'sqlite3';
import { MAX_SQLITE_VALUE_BYTES } from './bounded-values.js';
import { quoteSqliteIdent } from './sqlite.js';

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** How long the check of every page may take by default: a file it cannot finish checking is not kept. */
export const SQLITE_CHECK_TIMEOUT_MS = 30_000;

const DAMAGED = 'SQLite found the file damaged (PRAGMA quick_check): upload an intact copy, for example one written by VACUUM INTO or the .backup command.';

/** Null when the file is a readable SQLite database; else why not, in words safe to show. */
export async function sqliteFileProblem(file: string, checkTimeoutMs = SQLITE_CHECK_TIMEOUT_MS): Promise<string | null> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(HEADER.length);
    const { bytesRead } = await handle.read(head, 0, HEADER.length, 0);
    if (bytesRead < HEADER.length || !head.equals(HEADER)) return 'The file does not start with the SQLite 3 header: it is not an SQLite database.';
  } finally {
    await handle.close();
  }
  const db = await new Promise<sqlite3.Database | Error>((resolve) => {
    const opened: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => resolve(err ?? opened));
  });
  if (db instanceof Error) return 'SQLite could not open the file read-only.';
  try {
    return (await schemaProblem(db)) ?? (await pagesProblem(db, checkTimeoutMs));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

async function schemaProblem(db: sqlite3.Database): Promise<string | null> {
  try {
    await new Promise<void>((resolve, reject) => db.exec('PRAGMA query_only = ON', (err) => (err ? reject(err) : resolve())));
    await new Promise<void>((resolve, reject) => db.get('SELECT count(*) AS n FROM sqlite_master', (err) => (err ? reject(err) : resolve())));
    return null;
  } catch {
    return 'SQLite could not read the schema of the file: it is damaged, encrypted, or needs its -wal file (save it with journal_mode=DELETE).';
  }
}

/**
 * Every page checked, within `timeoutMs` (sqlite3_interrupt stops the check): a file not checked in time is not kept.
 *
 * quick_check first walks every b-tree page and reports what it finds there, then reads each row, computing the
 * virtual generated columns it type-checks: the file's schema decides what that costs. The handle caps every value
 * SQLite builds (as the sync handles do), so one computation ends at MAX_SQLITE_VALUE_BYTES; a computation that
 * would pass it either yields null (printf) or stops the statement with SQLITE_TOOBIG (zeroblob). A value too big to
 * compute is not damage: the pages were already checked, so each table is then checked on its own, and a table that
 * stops again has its stored columns read instead (every record header parsed, nothing computed).
 */
async function pagesProblem(db: sqlite3.Database, timeoutMs: number): Promise<string | null> {
  let interrupted = false;
  const timer = setTimeout(() => {
    interrupted = true;
    db.interrupt();
  }, timeoutMs);
  try {
    db.configure('limit', sqlite3.LIMIT_LENGTH, MAX_SQLITE_VALUE_BYTES);
    const whole = await checked(db, 'PRAGMA quick_check(1)', []);
    if (whole !== TOO_BIG) return whole;
    for (const table of await rows<{ name: string }>(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'", [])) {
      // An interrupt between two statements is lost: SQLite clears it once none is running.
      if (interrupted) throw new Error('interrupted');
      const found = await checked(db, "SELECT quick_check FROM pragma_quick_check(?, 'main')", [table.name]);
      if (found === TOO_BIG) await rows(db, storedColumnsRead(table.name, await storedColumns(db, table.name)), []);
      else if (found !== null) return found;
    }
    return null;
  } catch {
    return interrupted ? `SQLite could not check every page of the file within ${Math.ceil(timeoutMs / 1000)} s, so it was not kept.` : DAMAGED;
  } finally {
    clearTimeout(timer);
  }
}

const TOO_BIG = Symbol('a value too big to compute');

/** Null for `ok`; DAMAGED for the first problem reported; TOO_BIG when a value the check computes passed the cap. */
async function checked(db: sqlite3.Database, sql: string, params: unknown[]): Promise<string | null | typeof TOO_BIG> {
  try {
    // quick_check(1) stops at the first problem, so its first row is `ok` or that problem.
    const row = await new Promise<{ quick_check: unknown } | undefined>((resolve, reject) => {
      db.get(sql, params, (err: Error | null, found: { quick_check: unknown } | undefined) => (err ? reject(err) : resolve(found)));
    });
    return row?.quick_check === 'ok' ? null : DAMAGED;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'SQLITE_TOOBIG') return TOO_BIG;
    throw err;
  }
}

function rows<Row>(db: sqlite3.Database, sql: string, params: unknown[]): Promise<Row[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err: Error | null, found: Row[]) => (err ? reject(err) : resolve(found))));
}

/** The columns the file stores for `table` (not the virtual generated ones, hidden = 2). */
async function storedColumns(db: sqlite3.Database, table: string): Promise<string[]> {
  return (await rows<{ name: string; hidden: number }>(db, "SELECT name, hidden FROM pragma_table_xinfo(?, 'main')", [table]))
    .filter((column) => column.hidden !== 2)
    .map((column) => column.name);
}

/** One pass over every row asking each stored value's type: the record headers are parsed, no value is loaded. */
function storedColumnsRead(table: string, columns: string[]): string {
  const types = columns.map((column) => `typeof(${quoteSqliteIdent(column)})`).join(' || ');
  return `SELECT count(${types || '*'}) AS n FROM ${quoteSqliteIdent(table)}`;
}
