/**
 * SQLite connections name a file relative to the server's `SQLITE_DATA_DIR` (createDatabase). A user must never
 * reach a file outside it: not by an absolute path, not by `..`, not by a symlink inside the directory that points
 * out of it. Quarry's own store must not live in that directory.
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

function isInside(dir: string, candidate: string): boolean {
  const rel = path.relative(dir, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
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

  let root: string;
  try {
    root = await realpath(dataDir);
  } catch {
    throw new ConnectorError('SQLITE_PATH_NOT_ALLOWED', 'SQLite connections are not enabled on this server.', {
      engine: 'sqlite',
      reason: 'disabled',
    });
  }
  const candidate = path.resolve(root, relativePath);
  if (!isInside(root, candidate)) throw notAllowed('escapes');

  let real: string;
  try {
    real = await realpath(candidate);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ConnectorError('DATABASE_NOT_FOUND', 'The SQLite file does not exist.', { engine: 'sqlite' });
    }
    throw notAllowed('unreadable');
  }
  if (!isInside(root, real)) throw notAllowed('symlink_escapes');
  const info = await stat(real);
  if (!info.isFile()) throw notAllowed('not_a_file');
  return real;
}
