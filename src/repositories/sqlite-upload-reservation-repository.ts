import { Op, Transaction } from 'sequelize';
import { SqliteUploadReservationModel, UserModel } from '../models/index.js';
import { sqliteFileRepository, type StoredSqliteFile } from './sqlite-file-repository.js';

/** What an upload may read and change about its user's reservations while it holds the user's folder. */
export interface FolderLedger {
  /** Bytes held by the user's unexpired reservations other than `exceptId`. */
  reservedBytes(exceptId: string): Promise<number>;
  set(id: string, bytes: number, expiresAt: Date): Promise<void>;
  remove(id: string): Promise<void>;
  /** Bytes of the user's files kept in the store, other than `exceptName` (the one an upload replaces). */
  keptBytes(exceptName: string): Promise<number>;
  /** Points the file's name at its new version (written already); answers whether it replaced one. */
  keep(file: StoredSqliteFile): Promise<boolean>;
}

/**
 * Room reserved in users' SQLite folders by uploads under way. `underLock` runs its work while no other process can
 * change the same user's reservations: on PostgreSQL the user's row is locked (SELECT … FOR UPDATE), on the SQLite
 * store the transaction takes the write lock as it begins (BEGIN IMMEDIATE). So a check of the room left and the
 * reservation that follows it are one step, whatever uploads run at once and wherever.
 */
export const sqliteUploadReservationRepository = {
  async underLock<T>(userId: string, now: Date, work: (ledger: FolderLedger) => Promise<T>): Promise<T> {
    const sequelize = SqliteUploadReservationModel.sequelize!;
    const options = sequelize.getDialect() === 'sqlite' ? { type: Transaction.TYPES.IMMEDIATE } : {};
    return sequelize.transaction(options, async (transaction) => {
      await UserModel.findByPk(userId, { attributes: ['id'], transaction, lock: transaction.LOCK.UPDATE });
      await SqliteUploadReservationModel.destroy({ where: { userId, expiresAt: { [Op.lte]: now } }, transaction });
      return work({
        async reservedBytes(exceptId) {
          const held = await SqliteUploadReservationModel.sum('bytes', { where: { userId, id: { [Op.ne]: exceptId } }, transaction });
          return Number(held ?? 0);
        },
        async set(id, bytes, expiresAt) {
          await SqliteUploadReservationModel.upsert({ id, userId, bytes, expiresAt }, { transaction });
        },
        async remove(id) {
          await SqliteUploadReservationModel.destroy({ where: { id }, transaction });
        },
        keptBytes: (exceptName) => sqliteFileRepository.bytesOf(userId, exceptName, transaction),
        keep: (file) => sqliteFileRepository.keep(file, transaction),
      });
    });
  },

  /** Gives the room back (an upload that failed); needs no lock, it only frees room. */
  async remove(id: string): Promise<void> {
    await SqliteUploadReservationModel.destroy({ where: { id } });
  },
};

export type SqliteUploadReservationRepository = typeof sqliteUploadReservationRepository;
