/**
 * SQLite connections name a file relative to their owner's own folder, `<SQLITE_DATA_DIR>/<userId>/` (createDatabase,
 * uploadSqliteFile). A user must never reach a file outside it: not another user's folder, not by an absolute path,
 * not by `..`, not by a symlink that points out of it, not a hidden file (uploads in progress are hidden). Errors
 * name no path, so they never tell whether a file exists anywhere but in the caller's own folder. Quarry's own
 * store must not live in that directory.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConnectorError } from './errors.js';

function notAllowed(reason: string): ConnectorError {
  return new ConnectorError(
    'SQLITE_PATH_NOT_ALLOWED',
    "The SQLite file must be a relative path to a file inside the server's SQLite directory.",
    { engine: 'sqlite', reason },
  );
}

/** The folder of one user's SQLite files; user ids are generated (`usr_...`), never chosen, but checked anyway. */
export function userSqliteDir(root: string, userId: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(userId)) throw new Error(`not a user id: ${JSON.stringify(userId)}`);
  return path.join(root, userId);
}

function isInside(dir: string, candidate: string): boolean {
  const rel = path.relative(dir, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function missing(): ConnectorError {
  return new ConnectorError('DATABASE_NOT_FOUND', 'The SQLite file does not exist in your folder: upload it with PUT /api/v1/sqlite-files/{fileName}.', { engine: 'sqlite' });
}

/**
 * The real, absolute path of `relativePath` inside `dataDir`.
 * Throws SQLITE_PATH_NOT_ALLOWED for absolute paths, `..` segments, symlinks leading outside and non-files, and
 * DATABASE_NOT_FOUND for a file that does not exist inside the directory.
 */
export async function resolveSqlitePath(relativePath: string, dataDir: string | null | undefined): Promise<string> {
  if (!dataDir) {
    throw new ConnectorError('SQLITE_PATH_NOT_ALLOWED', 'SQLite connections are not enabled on this server.', {
      engine: 'sqlite',
      reason: 'disabled',
    });
  }
  if (!relativePath || relativePath.includes('\0') || relativePath.includes('\\')) throw notAllowed('invalid');
  // `file:` URIs could carry open flags (mode=rw) if a driver ever enabled URI filenames.
  if (/^file:/i.test(relativePath) || relativePath.startsWith(':')) throw notAllowed('invalid');
  if (path.isAbsolute(relativePath) || path.posix.isAbsolute(relativePath) || path.win32.isAbsolute(relativePath)) {
    throw notAllowed('absolute');
  }
  if (relativePath.split('/').some((segment) => segment === '..')) throw notAllowed('escapes');
  if (relativePath.split('/').some((segment) => segment.startsWith('.') && segment !== '.')) throw notAllowed('hidden');

  let root: string;
  try {
    root = await realpath(dataDir);
  } catch {
    // The owner has no folder yet: nothing was ever uploaded for them, so the file does not exist.
    throw missing();
  }
  const candidate = path.resolve(root, relativePath);
  if (!isInside(root, candidate)) throw notAllowed('escapes');

  let real: string;
  try {
    real = await realpath(candidate);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw missing();
    throw notAllowed('unreadable');
  }
  if (!isInside(root, real)) throw notAllowed('symlink_escapes');
  const info = await stat(real);
  if (!info.isFile()) throw notAllowed('not_a_file');
  return real;
}
