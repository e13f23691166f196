import { Op, type Transaction } from 'sequelize';
import { SqliteFileChunkModel, SqliteFileModel } from '../models/index.js';

/** The version an account's file name holds now. */
export interface StoredSqliteFile {
  userId: string;
  name: string;
  version: string;
  sizeBytes: number;
  sha256: string;
  chunks: number;
  uploadedAt: Date;
}

function toStored(row: SqliteFileModel): StoredSqliteFile {
  return { userId: row.userId, name: row.name, version: row.version, sizeBytes: row.sizeBytes, sha256: row.sha256, chunks: row.chunks, uploadedAt: row.uploadedAt };
}

/**
 * Uploaded SQLite files in the store every process shares. A version's chunks are written first, under a version id
 * no name points at yet (`writeChunk`); `keep` then points the name at it and drops the version it replaces, in one
 * transaction. A reader that finds a chunk missing read a version replaced meanwhile and starts again.
 */
export const sqliteFileRepository = {
  async find(userId: string, name: string): Promise<StoredSqliteFile | null> {
    const row = await SqliteFileModel.findOne({ where: { userId, name } });
    return row ? toStored(row) : null;
  },

  async list(userId: string): Promise<StoredSqliteFile[]> {
    return (await SqliteFileModel.findAll({ where: { userId }, order: [['name', 'ASC']] })).map(toStored);
  },

  /** Every account's file names (at start, to tell files uploaded before the store kept them). */
  async names(): Promise<Array<{ userId: string; name: string }>> {
    return (await SqliteFileModel.findAll({ attributes: ['userId', 'name'] })).map((row) => ({ userId: row.userId, name: row.name }));
  },

  async writeChunk(version: string, seq: number, data: Buffer, now: Date): Promise<void> {
    await SqliteFileChunkModel.create({ version, seq, data, createdAt: now });
  },

  async chunk(version: string, seq: number): Promise<Buffer | null> {
    const row = await SqliteFileChunkModel.findOne({ where: { version, seq }, attributes: ['data'] });
    return row ? Buffer.from(row.data) : null;
  },

  /** The chunks of a version no name will point at (an upload that failed after writing some). */
  async dropVersion(version: string): Promise<void> {
    await SqliteFileChunkModel.destroy({ where: { version } });
  },

  /**
   * Points the name at `file.version` and drops the version it held before; within `transaction` when given (the
   * upload keeps the file while holding its account's folder). Answers whether the name held a file before.
   */
  async keep(file: StoredSqliteFile, transaction?: Transaction): Promise<boolean> {
    const before = await SqliteFileModel.findOne({ where: { userId: file.userId, name: file.name }, transaction, lock: transaction?.LOCK.UPDATE });
    await SqliteFileModel.upsert({ ...file }, { transaction });
    if (before && before.version !== file.version) await SqliteFileChunkModel.destroy({ where: { version: before.version }, transaction });
    return before !== null;
  },

  /** Bytes of the account's files other than `exceptName` (the one an upload replaces). */
  async bytesOf(userId: string, exceptName: string, transaction?: Transaction): Promise<number> {
    const held = await SqliteFileModel.sum('sizeBytes', { where: { userId, name: { [Op.ne]: exceptName } }, transaction });
    return Number(held ?? 0);
  },

  /** Removes the name and its bytes; answers whether there was such a file. */
  async remove(userId: string, name: string): Promise<boolean> {
    const sequelize = SqliteFileModel.sequelize!;
    return sequelize.transaction(async (transaction) => {
      const row = await SqliteFileModel.findOne({ where: { userId, name }, transaction, lock: transaction.LOCK.UPDATE });
      if (!row) return false;
      await SqliteFileChunkModel.destroy({ where: { version: row.version }, transaction });
      await row.destroy({ transaction });
      return true;
    });
  },

  /**
   * Chunks written before `before` that no name points at: uploads whose process died between writing the bytes
   * and keeping the file. Later ones may belong to an upload under way.
   */
  async dropUnkept(before: Date): Promise<number> {
    const kept = (await SqliteFileModel.findAll({ attributes: ['version'] })).map((row) => row.version);
    return SqliteFileChunkModel.destroy({ where: { createdAt: { [Op.lt]: before }, ...(kept.length > 0 && { version: { [Op.notIn]: kept } }) } });
  },
};

export type SqliteFileRepository = typeof sqliteFileRepository;
