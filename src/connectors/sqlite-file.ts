/**
 * Whether a file is an SQLite database Quarry can read, checked before an upload is kept (uploadSqliteFile): the
 * 16-byte header every SQLite 3 database starts with, then a read-only open that reads the schema. Nothing in the
 * file is run or changed (OPEN_READONLY, no URI filenames, `PRAGMA query_only`).
 */
import { open } from 'node:fs/promises';
import sqlite3 from 'sqlite3';

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Null when the file is a readable SQLite database; else why not, in words safe to show. */
export async function sqliteFileProblem(file: string): Promise<string | null> {
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
    await new Promise<void>((resolve, reject) => db.exec('PRAGMA query_only = ON', (err) => (err ? reject(err) : resolve())));
    await new Promise<void>((resolve, reject) => db.get('SELECT count(*) AS n FROM sqlite_master', (err) => (err ? reject(err) : resolve())));
    return null;
  } catch {
    return 'SQLite could not read the schema of the file: it is damaged, encrypted, or needs its -wal file (save it with journal_mode=DELETE).';
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}
