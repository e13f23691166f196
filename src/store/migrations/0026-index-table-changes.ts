import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Following a table's changes between full syncs (poll mode): the column whose value grows with every change, how
 * often it is read, how far it has been read (the cursor a restarted process resumes from), as of when the index
 * holds every change, the last error, and the lease that lets one process at a time poll the table.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('index_tables', 'change_column', { type: DataTypes.STRING(255), allowNull: true });
  await q.addColumn('index_tables', 'poll_interval_seconds', { type: DataTypes.INTEGER, allowNull: true });
  await q.addColumn('index_tables', 'change_cursor', { type: DataTypes.TEXT, allowNull: true });
  await q.addColumn('index_tables', 'changes_as_of', { type: DataTypes.DATE, allowNull: true });
  await q.addColumn('index_tables', 'change_error', { type: DataTypes.JSON, allowNull: true });
  await q.addColumn('index_tables', 'poll_owner', { type: DataTypes.STRING(40), allowNull: true });
  await q.addColumn('index_tables', 'poll_heartbeat_at', { type: DataTypes.DATE, allowNull: true });
  await q.addColumn('index_tables', 'next_poll_at', { type: DataTypes.DATE, allowNull: true });
  await q.addIndex('index_tables', ['next_poll_at'], { name: 'index_tables_next_poll_at' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('index_tables', 'index_tables_next_poll_at');
  for (const column of ['change_column', 'poll_interval_seconds', 'change_cursor', 'changes_as_of', 'change_error', 'poll_owner', 'poll_heartbeat_at', 'next_poll_at']) {
    await q.removeColumn('index_tables', column);
  }
}
