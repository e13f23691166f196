import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Uploaded SQLite files kept in the store every Quarry process shares, so a sync or a search handled by any process
 * reads the file whichever process took the upload. `uploaded_files` names each account's current file and its
 * version; `uploaded_file_chunks` holds each version's bytes in order. A new version's chunks are written before its
 * name points at it, and the old version's chunks go in the same transaction that moves the name: a reader sees
 * the old file or the new one, never a mix.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('uploaded_files', {
    user_id: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.STRING(100), primaryKey: true, allowNull: false },
    version: { type: DataTypes.STRING(40), allowNull: false },
    size_bytes: { type: DataTypes.BIGINT, allowNull: false },
    sha256: { type: DataTypes.STRING(64), allowNull: false },
    chunks: { type: DataTypes.INTEGER, allowNull: false },
    uploaded_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.createTable('uploaded_file_chunks', {
    version: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false },
    seq: { type: DataTypes.INTEGER, primaryKey: true, allowNull: false },
    data: { type: DataTypes.BLOB, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('uploaded_file_chunks', ['created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('uploaded_file_chunks');
  await q.dropTable('uploaded_files');
}
