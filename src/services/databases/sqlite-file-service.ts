/**
 * Each user's SQLite files: the files that user's SQLite connections can name. A hosted user has no
 * shell on the server, so uploadSqliteFile takes a file: streamed to a hidden temporary file within the plan's size
 * limits, checked to be an SQLite database Quarry can read, written to the store every process shares
 * (uploaded_files, uploaded_file_chunks) and only then kept under its name, in one step: a search reads the old file or
 * the new one, never a half-written one, whichever process reads it. Each process reads its own copy on disk,
 * `<SQLITE_DATA_DIR>/<userId>/<name>` (SqliteFileCopies), fetched again when the store holds another version.
 */
import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { components } from '../../../generated/openapi.js';
import { resolveSqlitePath, sqliteFileProblem, userSqliteDir, type PoolManager } from '../../connectors/index.js';
import { AppError, notFound, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { SqliteFileRepository, StoredSqliteFile } from '../../repositories/sqlite-file-repository.js';
import type { SqliteUploadReservationRepository } from '../../repositories/sqlite-upload-reservation-repository.js';
import { UPLOAD_NAME, type SqliteFileCopies } from './sqlite-file-copies.js';
import type { UserCaller } from '../callers.js';
import { PLAN_LIMITS } from '../../rules/plan-limits.js';
import type { EventPublisher } from '../../lib/domain-events.js';
import type { TierName } from '../../rate-limit/index.js';
import type { ConnectionLifecycle } from './connection-lifecycle.js';

type UploadedFile = components['schemas']['SqliteFileUploadResponse']['data'];
type FileList = components['schemas']['SqliteFileListResponse']['data'];
type SqliteFile = components['schemas']['SqliteFile'];

export interface SqliteFileDeps {
  /** SQLITE_DATA_DIR. */
  root: string;
  plans: { planOf(userId: string): Promise<TierName> };
  connections: Pick<DatabaseConnectionRepository, 'listOwned' | 'listByEngine'>;
  pools: Pick<PoolManager, 'close'>;
  /** Room in the folder held by uploads under way, shared by every process. */
  reservations: SqliteUploadReservationRepository;
  /** The files themselves, in the store every process shares. */
  files: Pick<SqliteFileRepository, 'find' | 'list' | 'names' | 'writeChunk' | 'dropVersion' | 'remove' | 'keep' | 'dropUnkept'>;
  /** This process's copies of them. */
  copies: Pick<SqliteFileCopies, 'adopt' | 'drop' | 'refresh'>;
  /**
   * `file.replaced` when a file was replaced or removed (every process's copy of it is no longer known current), and
   * `connection.changed` for each connection that reads it (cached schemas and pages of it are stale).
   */
  events: EventPublisher;
  /** A connection's file was replaced: the search index syncs it again (src/search-index). */
  lifecycle: Pick<ConnectionLifecycle, 'sourceReplaced'>;
  log(level: 'info' | 'warn', message: string, context: Record<string, unknown>): void;
  now?: () => number;
}

/** An upload without a declared length reserves room in steps of this many bytes as its body arrives. */
const RESERVE_STEP_BYTES = 8 * 1024 * 1024;
/** A reservation not extended for this long belongs to an upload whose process is gone; the keep checks again. */
const RESERVATION_TTL_MS = 15 * 60_000;

/** Bytes per chunk of a file in the store (a row each). */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Chunks of an upload that was never kept (its process died) are removed at a start once they are this old. */
const UNKEPT_CHUNKS_MS = 24 * 60 * 60_000;

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
    const userId = caller.user.id;
    const plan = await this.deps.plans.planOf(userId);
    const limits = PLAN_LIMITS[plan];
    if (declaredLength !== null && declaredLength > limits.sqliteFileBytes) throw tooLarge(limits.sqliteFileBytes, plan);
    const dir = userSqliteDir(this.deps.root, userId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const folderFull = () => new AppError('PAYLOAD_TOO_LARGE', `Your SQLite folder would exceed the ${limits.sqliteFolderBytes} bytes your ${plan} plan allows: remove or replace a file first.`, { limit: limits.sqliteFolderBytes, plan });
    const reservation = newId('upl');
    /** Holds `bytes` of the folder for this upload when the files kept and the other uploads leave that much room. */
    const reserve = (bytes: number) => this.deps.reservations.underLock(userId, new Date(this.now()), async (ledger) => {
      if ((await ledger.keptBytes(fileName)) + (await ledger.reservedBytes(reservation)) + bytes > limits.sqliteFolderBytes) return false;
      await ledger.set(reservation, bytes, new Date(this.now() + RESERVATION_TTL_MS));
      return true;
    });
    const initial = Math.min(declaredLength ?? RESERVE_STEP_BYTES, limits.sqliteFileBytes);
    const temporary = join(dir, `.upload-${randomBytes(8).toString('hex')}`);
    const version = newId('sqf');
    let kept = false;
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
      // The bytes go to the store under a version no name points at yet; keeping the file points the name at it.
      const file = { userId, name: fileName, version, ...(await this.storeChunks(temporary, version)), uploadedAt: new Date(this.now()) };
      // Checked once more and kept in one step: a reservation that expired meanwhile is no room taken from others.
      const replaced = await this.deps.reservations.underLock(userId, new Date(this.now()), async (ledger) => {
        if ((await ledger.keptBytes(fileName)) + (await ledger.reservedBytes(reservation)) + file.sizeBytes > limits.sqliteFolderBytes) throw folderFull();
        const before = await ledger.keep(file);
        await ledger.remove(reservation);
        return before;
      });
      kept = true;
      // This process's copy is the file just checked: no need to fetch it back.
      await rename(temporary, join(dir, fileName));
      await this.deps.copies.adopt(userId, fileName, version);
      this.deps.events.publish('file.replaced', { userId, name: fileName });
      await this.reconnect(userId, fileName);
      return { created: !replaced, data: { file: toSqliteFile(file), replaced } };
    } finally {
      await rm(temporary, { force: true });
      await this.deps.reservations.remove(reservation).catch(() => undefined);
      if (!kept) await this.deps.files.dropVersion(version).catch(() => undefined);
    }
  }

  /** listSqliteFiles: every file of the caller's folder, as the store keeps it, and what the plan allows. */
  async list(caller: UserCaller): Promise<FileList> {
    const plan = await this.deps.plans.planOf(caller.user.id);
    const files = (await this.deps.files.list(caller.user.id)).map(toSqliteFile);
    return {
      files,
      total: files.length,
      usedBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0),
      limits: { plan, fileBytes: PLAN_LIMITS[plan].sqliteFileBytes, folderBytes: PLAN_LIMITS[plan].sqliteFolderBytes },
    };
  }

  /** deleteSqliteFile: refused (409) while a connection names the file. */
  async remove(caller: UserCaller, fileName: string): Promise<{ fileName: string; message: string }> {
    const userId = caller.user.id;
    if (!(await this.deps.files.find(userId, fileName))) throw notFound('SQLite file', fileName);
    const users = await this.connectionsOf(userId, fileName);
    if (users.length > 0) {
      throw new AppError('CONFLICT', 'Connections still name this file: delete or change them first.', { fileName, databaseIds: users.map((r) => r.id) });
    }
    await this.deps.files.remove(userId, fileName);
    await this.deps.copies.drop(userId, fileName);
    this.deps.events.publish('file.replaced', { userId, name: fileName });
    return { fileName, message: 'SQLite file deleted.' };
  }

  /**
   * Runs at every start, and changes nothing once every file is in the store:
   * - files of SQLite connections made before each user had a folder (they named files in SQLITE_DATA_DIR itself):
   *   a file that only one account ever connected is moved into that account's folder; a file several accounts
   *   connected is left where it is and reported, and those connections find no file until each account uploads
   *   its own copy;
   * - files in a user's folder that the store does not hold (uploaded before the store kept them) are written to it,
   *   so every process reads them;
   * - chunks of uploads that were never kept (their process died) are removed.
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
    await this.storeLocalFiles();
    await this.deps.files.dropUnkept(new Date(this.now() - UNKEPT_CHUNKS_MS));
  }

  /**
   * Files in the users' folders that the store does not hold and that are no copy of a file it held: uploaded before
   * the store kept them. Written to it as they are (another process may write the same file at once: the last one
   * kept wins, with the same bytes).
   */
  private async storeLocalFiles(): Promise<void> {
    const known = new Set((await this.deps.files.names()).map(({ userId, name }) => `${userId}/${name}`));
    const users = await readdir(this.deps.root, { withFileTypes: true }).catch(() => []);
    for (const user of users) {
      if (!user.isDirectory() || user.name.startsWith('.')) continue;
      const dir = join(this.deps.root, user.name);
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (!entry.isFile() || !UPLOAD_NAME.test(entry.name) || known.has(`${user.name}/${entry.name}`)) continue;
        const noted = await readFile(join(this.deps.root, '.copies', user.name, entry.name)).then(() => true, () => false);
        if (noted) continue; // a copy of a file since removed: the next read of it drops it
        const path = join(dir, entry.name);
        if (await sqliteFileProblem(path)) continue;
        const version = newId('sqf');
        try {
          const file = { userId: user.name, name: entry.name, version, ...(await this.storeChunks(path, version)), uploadedAt: (await stat(path)).mtime };
          await this.deps.files.keep(file);
          await this.deps.copies.adopt(user.name, entry.name, version);
          this.deps.log('info', 'a SQLite file uploaded before the store kept them is now in the store', { userId: user.name, name: entry.name, bytes: file.sizeBytes });
        } catch (error) {
          await this.deps.files.dropVersion(version).catch(() => undefined);
          // Its user may be gone (the folder outlived the account): leave the file and say so.
          this.deps.log('warn', 'a SQLite file in a user folder could not be written to the store; only this process reads it', { userId: user.name, name: entry.name, err: (error as Error).message });
        }
      }
    }
  }

  /** Writes a file's bytes to the store under `version`, in chunks; its size, digest and number of chunks. */
  private async storeChunks(path: string, version: string): Promise<{ sizeBytes: number; sha256: string; chunks: number }> {
    const hash = createHash('sha256');
    let sizeBytes = 0;
    let chunks = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await this.deps.files.writeChunk(version, chunks++, data, new Date(this.now()));
    };
    for await (const piece of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      hash.update(piece);
      sizeBytes += piece.length;
      pending.push(piece);
      pendingBytes += piece.length;
      if (pendingBytes >= CHUNK_BYTES) await flush();
    }
    if (pendingBytes > 0 || chunks === 0) await flush();
    return { sizeBytes, sha256: hash.digest('hex'), chunks };
  }

  /** The user's SQLite connections that name `fileName` (as `shop.db` or `./shop.db`). */
  private async connectionsOf(userId: string, fileName: string): Promise<DatabaseConnectionRecord[]> {
    return (await this.deps.connections.listOwned(userId)).filter((record) => record.engine === 'sqlite' && posix.normalize(record.database) === fileName);
  }

  /** Open pools still read the replaced file's old inode: close them so the next query opens the new one. */
  private async reconnect(userId: string, fileName: string): Promise<void> {
    for (const record of await this.connectionsOf(userId, fileName)) {
      await this.deps.pools.close(record.id);
      this.deps.events.publish('connection.changed', { databaseId: record.id });
      // A failed upkeep never fails the upload: the schedule syncs the connection later.
      await this.deps.lifecycle.sourceReplaced(record).catch((error: unknown) => this.deps.log('warn', 'search index upkeep failed', { err: error }));
    }
  }
}

function toSqliteFile(file: Pick<StoredSqliteFile, 'name' | 'sizeBytes' | 'uploadedAt'>): SqliteFile {
  return { name: file.name, sizeBytes: file.sizeBytes, uploadedAt: file.uploadedAt.toISOString() };
}
