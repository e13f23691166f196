import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Room reserved in a user's SQLite folder by uploads under way. The plan's folder limit counts the files kept and
 * these reservations together, checked and written while holding the user's row, so concurrent uploads (in any
 * process) cannot together keep more than the plan allows. A reservation left by a process that died expires.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('upload_reservations', {
    id: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false },
    user_id: { type: DataTypes.STRING(40), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    bytes: { type: DataTypes.BIGINT, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('upload_reservations', ['user_id', 'expires_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('upload_reservations');
}
