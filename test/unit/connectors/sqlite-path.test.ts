import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSqlitePath } from '../../../src/connectors/sqlite-path.js';

let root: string;
let dataDir: string;
let outside: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'quarry-sqlite-path-'));
  dataDir = path.join(root, 'data');
  outside = path.join(root, 'secret.db');
  await mkdir(path.join(dataDir, 'nested'), { recursive: true });
  await writeFile(path.join(dataDir, 'notes.db'), '');
  await writeFile(path.join(dataDir, 'nested', 'deep.db'), '');
  await writeFile(outside, '');
  await symlink(outside, path.join(dataDir, 'escape.db'));
  await symlink(path.join(dataDir, 'notes.db'), path.join(dataDir, 'alias.db'));
  await symlink(root, path.join(dataDir, 'up'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function failure(relative: string, dir: string | null = dataDir) {
  return resolveSqlitePath(relative, dir).then(
    () => {
      throw new Error(`expected ${relative} to be refused`);
    },
    (err: { code: string; details: { reason?: string }; message: string }) => err,
  );
}

describe('resolveSqlitePath', () => {
  it('when the file is inside the directory, then its real absolute path is returned', async () => {
    await expect(resolveSqlitePath('notes.db', dataDir)).resolves.toBe(path.join(dataDir, 'notes.db'));
    await expect(resolveSqlitePath('nested/deep.db', dataDir)).resolves.toBe(path.join(dataDir, 'nested', 'deep.db'));
    await expect(resolveSqlitePath('./notes.db', dataDir)).resolves.toBe(path.join(dataDir, 'notes.db'));
  });

  it('when a symlink points to a file inside the directory, then its target is returned', async () => {
    await expect(resolveSqlitePath('alias.db', dataDir)).resolves.toBe(path.join(dataDir, 'notes.db'));
  });

  it('when the path is absolute, then it is refused, even if it points inside the directory', async () => {
    for (const p of [outside, path.join(dataDir, 'notes.db'), '/etc/passwd']) {
      const err = await failure(p);
      expect(err.code).toBe('SQLITE_PATH_NOT_ALLOWED');
      expect(err.details.reason).toBe('absolute');
    }
  });

  it('when the path climbs with .., then it is refused', async () => {
    for (const p of ['../secret.db', 'nested/../../secret.db', 'nested/../notes.db', '..']) {
      const err = await failure(p);
      expect(err.code).toBe('SQLITE_PATH_NOT_ALLOWED');
      expect(err.details.reason).toBe('escapes');
    }
  });

  it('when a symlink inside the directory leads outside, then it is refused', async () => {
    expect((await failure('escape.db')).details.reason).toBe('symlink_escapes');
    expect((await failure('up/secret.db')).details.reason).toBe('symlink_escapes');
  });

  it('when the file does not exist inside the directory, then the code is DATABASE_NOT_FOUND', async () => {
    const err = await failure('missing.db');
    expect(err.code).toBe('DATABASE_NOT_FOUND');
    expect(err.message).not.toContain(dataDir);
  });

  it('when the path names a directory, then it is refused', async () => {
    expect((await failure('nested')).details.reason).toBe('not_a_file');
  });

  it('when the path is empty, a URI, a Windows path or contains NUL, then it is refused', async () => {
    for (const p of ['', 'file:notes.db?mode=rw', ':memory:', 'C:\\data\\x.db', 'nested\\deep.db', 'no\0tes.db']) {
      expect((await failure(p)).code).toBe('SQLITE_PATH_NOT_ALLOWED');
    }
  });

  it('when no SQLite directory is configured, then every path is refused', async () => {
    const err = await failure('notes.db', null);
    expect(err.code).toBe('SQLITE_PATH_NOT_ALLOWED');
    expect(err.details.reason).toBe('disabled');
  });
});
