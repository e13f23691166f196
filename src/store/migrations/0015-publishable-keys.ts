import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Publishable search keys: a key's type, and what only a publishable key has: its full value (public by
 * design, so it can be listed again), the origins whose pages may use it, the databases and tables it may search,
 * and its per-client-IP hourly limit (null: the tier's default). Every existing key is a secret key.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('api_keys', 'kind', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'secret' });
  await q.addColumn('api_keys', 'publishable_key', { type: DataTypes.STRING(80), allowNull: true });
  await q.addColumn('api_keys', 'allowed_origins', { type: DataTypes.JSON, allowNull: true });
  await q.addColumn('api_keys', 'database_ids', { type: DataTypes.JSON, allowNull: true });
  await q.addColumn('api_keys', 'table_names', { type: DataTypes.JSON, allowNull: true });
  await q.addColumn('api_keys', 'requests_per_ip_per_hour', { type: DataTypes.INTEGER, allowNull: true });
}

export async function down(q: QueryInterface): Promise<void> {
  // A publishable key cannot be told from a secret key once `kind` is gone: remove them rather than widen them.
  await q.bulkDelete('api_keys', { kind: 'publishable' });
  for (const column of ['requests_per_ip_per_hour', 'table_names', 'database_ids', 'allowed_origins', 'publishable_key', 'kind']) {
    await q.removeColumn('api_keys', column);
  }
}
