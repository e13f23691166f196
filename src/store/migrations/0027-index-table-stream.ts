import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Stream mode: a table follows its PostgreSQL database's logical replication. The slot's position is kept where a
 * poll keeps its cursor (`change_cursor`), and the lease is the poll's (`poll_owner`, `poll_heartbeat_at`), held by
 * one process for every streamed table of a connection.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('index_tables', 'change_stream', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeColumn('index_tables', 'change_stream');
}
