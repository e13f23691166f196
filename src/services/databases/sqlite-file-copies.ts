/**
 * Each process's own copy of the uploaded SQLite files it reads. The files themselves live in the store every
 * process shares (uploaded_files, uploaded_file_chunks): whichever process took an upload, any other can sync or search
 * the file. SQLite reads a file on disk, so a process keeps a copy at `<SQLITE_DATA_DIR>/<userId>/<name>`, the path
 * connections resolve, and fetches it again when the store holds another version: written to a hidden file,
 * checked against the version's SHA-256, then renamed over the name (an open handle notices the new file before its
 * next query). Which version a copy holds is noted beside it, in `<SQLITE_DATA_DIR>/.copies/<userId>/<name>`, with the
 * copy's inode, so a copy renamed over by another process sharing the folder is never taken for the noted version.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { userSqliteDir } from '../../connectors/index.js';
import type { SqliteFileRepository, StoredSqliteFile } from '../../repositories/sqlite-file-repository.js';

/** The names an upload may have (openapi.yaml, SqliteFileName): only those are kept in the store. */
export const UPLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface SqliteFileCopiesDeps {
  /** SQLITE_DATA_DIR. */
  root: string;
  files: Pick<SqliteFileRepository, 'find' | 'chunk'>;
  /**
   * How long a copy found current is taken as current without asking the store again. A replacement made by another
   * process is also announced on the invalidation bus (`forget`), which reaches every process when Redis is set.
   */
  freshMs: number;
  log(level: 'info' | 'warn', message: string, context: Record<string, unknown>): void;
  now?: () => number;
}

/** A version changed while its chunks were read (another upload replaced it): read the new one. */
class VersionGone extends Error {}

export class SqliteFileCopies {
  private readonly now: () => number;
  /** Copies found current, and when. */
  private readonly checked = new Map<string, number>();
  /** Fetches under way, one per file. */
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(private readonly deps: SqliteFileCopiesDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The copy of a file is no longer known current (it was replaced or removed, maybe by another process). */
  forget(userId: string, name: string): void {
    this.checked.delete(`${userId}/${name}`);
  }

  /**
   * Makes this process's copy of `name` the version the store holds, unless it was found current within `freshMs`
   * (`latest` asks the store in any case: a sync must read the file it was started for). A file the store does not
   * hold is left as it is (a file put in the folder by hand); a copy of a file removed from the store goes. When the
   * store cannot be read, the copy there is used as it is: searches go on through a store outage.
   */
  async refresh(userId: string, name: string, options: { latest?: boolean } = {}): Promise<void> {
    if (!UPLOAD_NAME.test(name)) return;
    const key = `${userId}/${name}`;
    const checkedAt = this.checked.get(key);
    if (!options.latest && checkedAt !== undefined && this.now() - checkedAt < this.deps.freshMs) return;
    let fetching = this.fetching.get(key);
    if (!fetching) {
      fetching = this.fetch(userId, name).finally(() => this.fetching.delete(key));
      this.fetching.set(key, fetching);
    }
    await fetching;
  }

  /** Notes that the copy now at the file's name is `version` (the process that took the upload wrote it). */
  async adopt(userId: string, name: string, version: string): Promise<void> {
    const info = await stat(this.copyPath(userId, name));
    await this.writeNote(userId, name, `${version} ${info.ino}`);
    this.checked.set(`${userId}/${name}`, this.now());
  }

  /** Removes this process's copy and its note (the file was removed from the store). */
  async drop(userId: string, name: string): Promise<void> {
    await rm(this.copyPath(userId, name), { force: true });
    await rm(this.notePath(userId, name), { force: true });
    this.forget(userId, name);
  }

  private copyPath(userId: string, name: string): string {
    return join(userSqliteDir(this.deps.root, userId), name);
  }

  private notePath(userId: string, name: string): string {
    return join(userSqliteDir(join(this.deps.root, '.copies'), userId), name);
  }

  private async writeNote(userId: string, name: string, note: string): Promise<void> {
    const path = this.notePath(userId, name);
    await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, note, { mode: 0o600 });
    await rename(temporary, path);
  }

  /** The version the copy at the name holds, or null when there is none or it is not the one noted. */
  private async copyVersion(userId: string, name: string): Promise<string | null> {
    const [note, info] = await Promise.all([
      readFile(this.notePath(userId, name), 'utf8').catch(() => null),
      stat(this.copyPath(userId, name)).catch(() => null),
    ]);
    if (!note || !info) return null;
    const [version, inode] = note.split(' ');
    return inode === String(info.ino) ? version ?? null : null;
  }

  private async fetch(userId: string, name: string): Promise<void> {
    const key = `${userId}/${name}`;
    const startedAt = this.now();
    for (let attempt = 0; ; attempt++) {
      let stored: StoredSqliteFile | null;
      try {
        stored = await this.deps.files.find(userId, name);
      } catch (error) {
        // The store is down: the copy on disk (if any) answers until it is back; asked again after freshMs.
        this.deps.log('warn', 'the store could not say which version of a SQLite file is current; the local copy is used', { userId, name, err: (error as Error).message });
        this.checked.set(key, startedAt);
        return;
      }
      if (!stored) {
        // Removed from the store (by any process): a copy noted from it goes; a file never kept there stays.
        const noted = await readFile(this.notePath(userId, name), 'utf8').then(() => true, () => false);
        if (noted) await this.drop(userId, name);
        this.checked.set(key, startedAt);
        return;
      }
      if ((await this.copyVersion(userId, name)) === stored.version) {
        this.checked.set(key, startedAt);
        return;
      }
      try {
        await this.download(stored);
        this.checked.set(key, startedAt);
        return;
      } catch (error) {
        if (!(error instanceof VersionGone) || attempt >= 3) throw error;
      }
    }
  }

  private async download(file: StoredSqliteFile): Promise<void> {
    const target = this.copyPath(file.userId, file.name);
    await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
    const temporary = join(target, '..', `.copy-${randomBytes(8).toString('hex')}`);
    try {
      const out = createWriteStream(temporary, { flags: 'wx', mode: 0o600 });
      const hash = createHash('sha256');
      try {
        for (let seq = 0; seq < file.chunks; seq++) {
          const chunk = await this.deps.files.chunk(file.version, seq);
          if (!chunk) throw new VersionGone();
          hash.update(chunk);
          if (!out.write(chunk)) await once(out, 'drain');
        }
      } finally {
        out.end();
        await once(out, 'close');
      }
      if (hash.digest('hex') !== file.sha256) throw new VersionGone();
      await rename(temporary, target);
      const info = await stat(target);
      await this.writeNote(file.userId, file.name, `${file.version} ${info.ino}`);
      this.deps.log('info', 'fetched the current version of a SQLite file from the store', { userId: file.userId, name: file.name, bytes: file.sizeBytes });
    } finally {
      await rm(temporary, { force: true });
    }
  }
}
