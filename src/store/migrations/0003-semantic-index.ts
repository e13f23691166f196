import { DataTypes, type QueryInterface } from 'sequelize';

const connectionId = {
  type: DataTypes.STRING(40),
  allowNull: false,
  references: { model: 'database_connections', key: 'id' },
  onDelete: 'CASCADE',
};

/**
 * Semantic search: one job row per index run of a connection's table, and one vector per indexed row.
 * Vectors are little-endian float32 of unit length in a BLOB (bytea on PostgreSQL): pgvector is not assumed.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('semantic_index_jobs', {
    id: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false },
    connection_id: connectionId,
    table_name: { type: DataTypes.STRING(255), allowNull: false },
    // queued | running | done | failed | cancelled
    status: { type: DataTypes.STRING(16), allowNull: false },
    provider_id: { type: DataTypes.STRING(200), allowNull: false },
    row_limit: { type: DataTypes.INTEGER, allowNull: false },
    rows_total: { type: DataTypes.INTEGER, allowNull: true },
    rows_done: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_embedded: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_skipped: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_deleted: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    truncated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    // Primary key values (JSON array) of the last row written: a resumed job reads on after it.
    cursor: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.JSON, allowNull: true },
    // Touched while a process runs the job; a job whose heartbeat is stale is claimed by another (or the restarted) process.
    heartbeat_at: { type: DataTypes.DATE, allowNull: true },
    resumed_at: { type: DataTypes.DATE, allowNull: true },
    rows_at_resume: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    started_at: { type: DataTypes.DATE, allowNull: true },
    finished_at: { type: DataTypes.DATE, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('semantic_index_jobs', ['connection_id', 'table_name', 'created_at']);
  await q.addIndex('semantic_index_jobs', ['status']);
  // At most one live job per table, even when two start requests race.
  await q.addIndex('semantic_index_jobs', ['connection_id', 'table_name'], {
    name: 'semantic_index_jobs_one_live',
    unique: true,
    where: { status: ['queued', 'running'] },
  });

  await q.createTable('semantic_vectors', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    connection_id: connectionId,
    table_name: { type: DataTypes.STRING(255), allowNull: false },
    // JSON object of the row's primary key column(s) and value(s), in key order.
    primary_key: { type: DataTypes.TEXT, allowNull: false },
    // sha256 of the row's searchable text: an unchanged row is not embedded again.
    content_hash: { type: DataTypes.STRING(64), allowNull: false },
    provider_id: { type: DataTypes.STRING(200), allowNull: false },
    vector: { type: DataTypes.BLOB, allowNull: false },
    // The last job that saw the row; after a full pass, rows other jobs saw last are gone from the source.
    job_id: { type: DataTypes.STRING(40), allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('semantic_vectors', ['connection_id', 'table_name', 'primary_key'], { unique: true, name: 'semantic_vectors_row' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('semantic_vectors');
  await q.dropTable('semantic_index_jobs');
}
