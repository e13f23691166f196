import { createHash } from 'node:crypto';
import { DataTypes, type QueryInterface } from 'sequelize';
import * as semanticIndex from './0003-semantic-index.js';

const connectionId = {
  type: DataTypes.STRING(40),
  allowNull: false,
  references: { model: 'database_connections', key: 'id' },
  onDelete: 'CASCADE',
};

/**
 * Quarry's own search index. The rows themselves live in LanceDB (src/search-index); the store keeps
 * which tables are indexed and how (`index_tables`), the sync jobs that fill them (`index_jobs`, the generalisation
 * of the semantic index jobs), and each connection's sync schedule.
 *
 * The semantic vectors kept in the store until now are dropped: vectors move into the index. Every table that had a
 * finished semantic index becomes an indexed table with semantic search on, and gets a queued sync, so its rows are
 * embedded again into the index at the first start.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('database_connections', 'index_enabled', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true });
  await q.addColumn('database_connections', 'sync_interval_minutes', { type: DataTypes.INTEGER, allowNull: true, defaultValue: 60 });
  // When the scheduler next queues a sync of every indexed table; the process that moves it forward queues it.
  await q.addColumn('database_connections', 'next_sync_at', { type: DataTypes.DATE, allowNull: true });

  await q.createTable('index_tables', {
    // Also the table's `src` in the LanceDB space: an id Quarry made, safe in an index filter.
    id: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false },
    connection_id: connectionId,
    table_name: { type: DataTypes.STRING(255), allowNull: false },
    semantic: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    // Primary key and text columns at the last sync: results name the key, snippets come from the text columns.
    key_columns: { type: DataTypes.JSON, allowNull: true },
    text_columns: { type: DataTypes.JSON, allowNull: true },
    rows: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    truncated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    // The embedding model of the table's vectors at the last sync (null: no vectors).
    vector_model: { type: DataTypes.STRING(200), allowNull: true },
    // The last finished sync: it started reading the source at sync_started_at, so the index holds the source as
    // of at least that moment.
    synced_at: { type: DataTypes.DATE, allowNull: true },
    sync_started_at: { type: DataTypes.DATE, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('index_tables', ['connection_id', 'table_name'], { unique: true, name: 'index_tables_table' });

  await q.createTable('index_jobs', {
    id: { type: DataTypes.STRING(40), primaryKey: true, allowNull: false },
    connection_id: connectionId,
    table_name: { type: DataTypes.STRING(255), allowNull: false },
    // The search space (user and environment) the job writes: one running job per space.
    space: { type: DataTypes.STRING(80), allowNull: false },
    // connect | manual | schedule | settings
    trigger: { type: DataTypes.STRING(16), allowNull: false },
    // queued | running | done | failed | cancelled
    status: { type: DataTypes.STRING(16), allowNull: false },
    semantic: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    provider_id: { type: DataTypes.STRING(200), allowNull: true },
    row_limit: { type: DataTypes.INTEGER, allowNull: false },
    rows_total: { type: DataTypes.INTEGER, allowNull: true },
    rows_done: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_written: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_embedded: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_skipped: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    rows_deleted: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    truncated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    // Primary key values (JSON array) of the last row written: a resumed job reads on after it.
    cursor: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.JSON, allowNull: true },
    heartbeat_at: { type: DataTypes.DATE, allowNull: true },
    resumed_at: { type: DataTypes.DATE, allowNull: true },
    rows_at_resume: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    started_at: { type: DataTypes.DATE, allowNull: true },
    finished_at: { type: DataTypes.DATE, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.addIndex('index_jobs', ['connection_id', 'table_name', 'created_at']);
  await q.addIndex('index_jobs', ['status']);
  // At most one live job per table, even when two requests (or the scheduler in two processes) race.
  await q.addIndex('index_jobs', ['connection_id', 'table_name'], { name: 'index_jobs_one_live', unique: true, where: { status: ['queued', 'running'] } });
  // At most one running job per space: the claim that would make a second one fails, so one process writes a space.
  await q.addIndex('index_jobs', ['space'], { name: 'index_jobs_one_running_per_space', unique: true, where: { status: 'running' } });

  await carryOverSemanticTables(q);
  await q.dropTable('semantic_vectors');
  await q.dropTable('semantic_index_jobs');
}

/** Tables with a finished semantic index stay semantic: an indexed table with semantic on and a queued sync. */
async function carryOverSemanticTables(q: QueryInterface): Promise<void> {
  const [rows] = await q.sequelize.query(
    `SELECT DISTINCT j.connection_id AS "connectionId", j.table_name AS "tableName", c.user_id AS "userId", c.environment AS "environment"
       FROM semantic_index_jobs j JOIN database_connections c ON c.id = j.connection_id WHERE j.status = 'done'`,
  );
  const now = new Date();
  for (const row of rows as Array<{ connectionId: string; tableName: string; userId: string; environment: string }>) {
    const suffix = `${row.connectionId}:${row.tableName}`;
    await q.bulkInsert('index_tables', [{
      id: migratedId('itb', suffix), connection_id: row.connectionId, table_name: row.tableName, semantic: true,
      rows: 0, truncated: false, created_at: now, updated_at: now,
    }]);
    await q.bulkInsert('index_jobs', [{
      id: migratedId('ijob', suffix), connection_id: row.connectionId, table_name: row.tableName,
      space: `space_${row.userId}_${row.environment}`, trigger: 'settings', status: 'queued', semantic: true,
      row_limit: 10_000, rows_done: 0, rows_written: 0, rows_embedded: 0, rows_skipped: 0, rows_deleted: 0,
      truncated: false, rows_at_resume: 0, created_at: now, updated_at: now,
    }]);
  }
}

/** A deterministic id for a carried-over row (22 characters of base64url, the alphabet of Quarry's ids). */
function migratedId(prefix: string, key: string): string {
  return `${prefix}_${createHash('sha256').update(key).digest('base64url').slice(0, 22).replace(/[-_]/g, 'x')}`;
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('index_jobs');
  await q.dropTable('index_tables');
  await semanticIndex.up(q);
  await q.removeColumn('database_connections', 'next_sync_at');
  await q.removeColumn('database_connections', 'sync_interval_minutes');
  await q.removeColumn('database_connections', 'index_enabled');
}
