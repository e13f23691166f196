/**
 * Whether a file is an SQLite database Quarry can read, checked before an upload is kept (uploadSqliteFile): the
 * 16-byte header every SQLite 3 database starts with, then a read-only open that reads the schema, then SQLite's own
 * check of every page (`PRAGMA quick_check`): a file whose first pages are sound and the rest damaged would otherwise
 * be kept, connect and test fine, and fail each schema read and sync afterwards. Nothing in the file is run or
 * changed (OPEN_READONLY, no URI filenames, `PRAGMA query_only`).
 */
import { open } from 'node:fs/promises';
import sqlite3 from 'sqlite3';

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

/** Every page checked, within `timeoutMs` (sqlite3_interrupt stops the check): a file not checked in time is not kept. */
async function pagesProblem(db: sqlite3.Database, timeoutMs: number): Promise<string | null> {
  let interrupted = false;
  const timer = setTimeout(() => {
    interrupted = true;
    db.interrupt();
  }, timeoutMs);
  try {
    // One row `ok` for a sound file; otherwise the first problem found (or an error such as SQLITE_CORRUPT).
    const rows = await new Promise<Array<{ quick_check: unknown }>>((resolve, reject) => {
      db.all('PRAGMA quick_check(1)', (err: Error | null, found: Array<{ quick_check: unknown }>) => (err ? reject(err) : resolve(found)));
    });
    return rows.length === 1 && rows[0]!.quick_check === 'ok' ? null : DAMAGED;
  } catch {
    return interrupted ? `SQLite could not check every page of the file within ${Math.ceil(timeoutMs / 1000)} s, so it was not kept.` : DAMAGED;
  } finally {
    clearTimeout(timer);
  }
}
