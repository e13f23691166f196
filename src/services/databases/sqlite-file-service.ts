/**
 * Each user's SQLite files (issue 23 item 2): `<SQLITE_DATA_DIR>/<userId>/`, the only folder that user's SQLite
 * connections can name. A hosted user has no shell on the server, so uploadSqliteFile puts a file there: streamed to
 * a hidden temporary file within the plan's size limits, checked to be an SQLite database Quarry can read, and only
 * then renamed over the name (atomic: a search reads the old file or the new one, never a half-written one).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { components } from '../../../generated/openapi.js';
import { resolveSqlitePath, sqliteFileProblem, userSqliteDir, type PoolManager } from '../../connectors/index.js';
import { AppError, notFound, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { SqliteUploadReservationRepository } from '../../repositories/sqlite-upload-reservation-repository.js';
import type { UserCaller } from '../callers.js';
import { PLAN_LIMITS } from '../accounts/plan-limits.js';
import type { PlanService } from '../accounts/plan-service.js';

type UploadedFile = components['schemas']['SqliteFileUploadResponse']['data'];
type FileList = components['schemas']['SqliteFileListResponse']['data'];
type SqliteFile = components['schemas']['SqliteFile'];

export interface SqliteFileDeps {
  /** SQLITE_DATA_DIR. */
  root: string;
  plans: Pick<PlanService, 'planOf'>;
  connections: Pick<DatabaseConnectionRepository, 'listOwned' | 'listByEngine'>;
  pools: Pick<PoolManager, 'close'>;
  /** Room in the folder held by uploads under way, shared by every process. */
  reservations: SqliteUploadReservationRepository;
  /** A connection's file was replaced: cached schemas and pages of it are stale. */
  onConnectionChanged(databaseId: string): void;
  /** A connection's file was replaced: the search index syncs it again (src/search-index). */
  onSourceReplaced(record: DatabaseConnectionRecord): Promise<void>;
  log(level: 'info' | 'warn', message: string, context: Record<string, unknown>): void;
  now?: () => number;
}

/** An upload without a declared length reserves room in steps of this many bytes as its body arrives. */
const RESERVE_STEP_BYTES = 8 * 1024 * 1024;
/** A reservation not extended for this long belongs to an upload whose process is gone; the keep checks again. */
const RESERVATION_TTL_MS = 15 * 60_000;

/** A file SQLite itself writes beside a database: uploading one would change what that database reads. */
const SIDE_FILE = /-(wal|shm|journal)$/i;

function tooLarge(limit: number, plan: string): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `The upload exceeds the ${limit} bytes your ${plan} plan allows for SQLite files.`, { limit, plan });
}

/**
 * Counts bytes as they pass: past `fileLimit` the stream fails at once; past the room reserved so far it waits for
 * more (`grow`, given the bytes seen) and fails when the folder has none left.
 */
function byteLimit(fileLimit: number, tooLargeError: () => Error, reserved: number, grow: (seen: number) => Promise<number | Error>): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > fileLimit) return done(tooLargeError());
      if (seen <= reserved) return done(null, chunk);
      grow(seen).then((now) => {
        if (now instanceof Error) return done(now);
        reserved = now;
        done(null, chunk);
      }, done);
    },
  });
}

export class SqliteFileService {
  private readonly now: () => number;

  constructor(private readonly deps: SqliteFileDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * uploadSqliteFile: creates or atomically replaces `fileName` in the caller's folder. The folder's room is reserved
   * in the store before bytes are written (the declared length, else step by step as they arrive) and checked once
   * more as the file is kept: concurrent uploads, in any process, never keep more than the plan allows together.
   */
  async upload(caller: UserCaller, fileName: string, body: Readable, declaredLength: number | null): Promise<{ created: boolean; data: UploadedFile }> {
    if (SIDE_FILE.test(fileName)) {
      throw validationError([{ location: 'path', path: '/fileName', message: 'must not name a -wal, -shm or -journal file (SQLite keeps those itself)' }]);
    }
    const plan = await this.deps.plans.planOf(caller.user.id);
    const limits = PLAN_LIMITS[plan];
    if (declaredLength !== null && declaredLength > limits.sqliteFileBytes) throw tooLarge(limits.sqliteFileBytes, plan);
    const dir = userSqliteDir(this.deps.root, caller.user.id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const target = join(dir, fileName);
    const folderFull = () => new AppError('PAYLOAD_TOO_LARGE', `Your SQLite folder would exceed the ${limits.sqliteFolderBytes} bytes your ${plan} plan allows: remove or replace a file first.`, { limit: limits.sqliteFolderBytes, plan });
    const reservation = newId('upl');
    /** Holds `bytes` of the folder for this upload when the files kept and the other uploads leave that much room. */
    const reserve = (bytes: number) => this.deps.reservations.underLock(caller.user.id, new Date(this.now()), async (ledger) => {
      if ((await this.folderBytes(dir, fileName)) + (await ledger.reservedBytes(reservation)) + bytes > limits.sqliteFolderBytes) return false;
      await ledger.set(reservation, bytes, new Date(this.now() + RESERVATION_TTL_MS));
      return true;
    });
    const initial = Math.min(declaredLength ?? RESERVE_STEP_BYTES, limits.sqliteFileBytes);
    const temporary = join(dir, `.upload-${randomBytes(8).toString('hex')}`);
    try {
      // Without a declared length, a first step that does not fit may still leave room for a smaller file.
      let held = (await reserve(initial)) ? initial : declaredLength === null && (await reserve(0)) ? 0 : null;
      if (held === null) throw folderFull();
      const grow = async (seen: number) => {
        const next = Math.min(limits.sqliteFileBytes, Math.max(seen, held! + RESERVE_STEP_BYTES));
        if (await reserve(next)) return (held = next);
        // A whole step does not fit: the bytes already here may, and the upload stops only past the room left.
        return next > seen && (await reserve(seen)) ? (held = seen) : folderFull();
      };
      await pipeline(body, byteLimit(limits.sqliteFileBytes, () => tooLarge(limits.sqliteFileBytes, plan), held, grow), createWriteStream(temporary, { flags: 'wx', mode: 0o600 }));
      const problem = await sqliteFileProblem(temporary);
      if (problem) throw new AppError('INVALID_SQLITE_FILE', problem, { fileName });
      const size = (await stat(temporary)).size;
      const existed = await stat(target).then((info) => info.isFile(), () => false);
      // Checked once more and kept in one step: a reservation that expired meanwhile is no room taken from others.
      await this.deps.reservations.underLock(caller.user.id, new Date(this.now()), async (ledger) => {
        if ((await this.folderBytes(dir, fileName)) + (await ledger.reservedBytes(reservation)) + size > limits.sqliteFolderBytes) throw folderFull();
        await rename(temporary, target);
        await ledger.remove(reservation);
      });
      const info = await stat(target);
      await this.reconnect(caller.user.id, dir, target);
      return { created: !existed, data: { file: { name: fileName, sizeBytes: info.size, uploadedAt: info.mtime.toISOString() }, replaced: existed } };
    } finally {
      await rm(temporary, { force: true });
      await this.deps.reservations.remove(reservation).catch(() => undefined);
    }
  }

  /** listSqliteFiles: every file of the caller's folder (names relative to it) and what the plan allows. */
  async list(caller: UserCaller): Promise<FileList> {
    const plan = await this.deps.plans.planOf(caller.user.id);
    const dir = userSqliteDir(this.deps.root, caller.user.id);
    const files = await this.files(dir);
    return {
      files,
      total: files.length,
      usedBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0),
      limits: { plan, fileBytes: PLAN_LIMITS[plan].sqliteFileBytes, folderBytes: PLAN_LIMITS[plan].sqliteFolderBytes },
    };
  }

  /** deleteSqliteFile: refused (409) while a connection names the file. */
  async remove(caller: UserCaller, fileName: string): Promise<{ fileName: string; message: string }> {
    const dir = userSqliteDir(this.deps.root, caller.user.id);
    const target = await resolveSqlitePath(fileName, dir).catch(() => null);
    if (!target) throw notFound('SQLite file', fileName);
    const users = await this.connectionsOf(caller.user.id, dir, target);
    if (users.length > 0) {
      throw new AppError('CONFLICT', 'Connections still name this file: delete or change them first.', { fileName, databaseIds: users.map((r) => r.id) });
    }
    await rm(target, { force: true });
    return { fileName, message: 'SQLite file deleted.' };
  }

  /**
   * Files of SQLite connections made before each user had a folder (they named files in SQLITE_DATA_DIR itself):
   * a file that only one account ever connected is moved into that account's folder; a file several accounts
   * connected is left where it is and reported, and those connections find no file until each account uploads
   * its own copy. Runs at every start and changes nothing once every file has been moved.
   */
  async adoptSharedFiles(): Promise<void> {
    const records = await this.deps.connections.listByEngine('sqlite');
    const owners = new Map<string, Set<string>>();
    for (const record of records) owners.set(record.database, (owners.get(record.database) ?? new Set()).add(record.userId));
    for (const [file, users] of owners) {
      const shared = await resolveSqlitePath(file, this.deps.root).catch(() => null);
      if (!shared) continue;
      if (users.size > 1) {
        this.deps.log('warn', 'a SQLite file in SQLITE_DATA_DIR is connected by several accounts: left in place; each must upload its own copy', { file, accounts: users.size });
        continue;
      }
      const [owner] = [...users] as [string];
      const dir = userSqliteDir(this.deps.root, owner);
      if (await resolveSqlitePath(file, dir).then(() => true, () => false)) continue;
      const target = join(dir, file);
      await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
      // Another process may have moved it a moment ago.
      await rename(shared, target).then(
        () => this.deps.log('info', "moved a SQLite file into its owner's folder", { file, userId: owner }),
        (error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error; },
      );
    }
  }

  /** The files of a folder (hidden ones are uploads in progress: not files yet), by name relative to it. */
  private async files(dir: string): Promise<SqliteFile[]> {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
    const files: SqliteFile[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.startsWith('.')) continue;
      const info = await stat(join(entry.parentPath, entry.name)).catch(() => null);
      if (info) files.push({ name: relative(dir, join(entry.parentPath, entry.name)), sizeBytes: info.size, uploadedAt: info.mtime.toISOString() });
    }
    return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Bytes of the user's files other than `except` (the file an upload replaces). */
  private async folderBytes(dir: string, except: string): Promise<number> {
    return (await this.files(dir)).reduce((sum, file) => sum + (file.name === except ? 0 : file.sizeBytes), 0);
  }

  /** The user's SQLite connections that read `target` (a real path in `dir`). */
  private async connectionsOf(userId: string, dir: string, target: string): Promise<DatabaseConnectionRecord[]> {
    const found: DatabaseConnectionRecord[] = [];
    for (const record of await this.deps.connections.listOwned(userId)) {
      if (record.engine === 'sqlite' && (await resolveSqlitePath(record.database, dir).catch(() => null)) === target) found.push(record);
    }
    return found;
  }

  /** Open pools still read the replaced file's old inode: close them so the next query opens the new one. */
  private async reconnect(userId: string, dir: string, target: string): Promise<void> {
    for (const record of await this.connectionsOf(userId, dir, await realpath(target))) {
      await this.deps.pools.close(record.id);
      this.deps.onConnectionChanged(record.id);
      await this.deps.onSourceReplaced(record);
    }
  }
}
