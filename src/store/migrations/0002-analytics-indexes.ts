import { DataTypes, type QueryInterface } from 'sequelize';
import { rebuildRollups } from '../../repositories/search-rollups.js';

const count = { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 };
const total = { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 };
const userId = { type: DataTypes.STRING(40), allowNull: false, primaryKey: true };
const bucket = { type: DataTypes.DATE, allowNull: false, primaryKey: true };

/**
 * Analytics read paths: roll-up tables of search_records (see src/repositories/search-rollups.ts), filled from any
 * searches already recorded, and indexes for the reads that stay on raw rows and for the retention job.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('search_stats_hourly', {
    user_id: userId,
    hour_start: bucket,
    searches: count, total_ms: total, total_results: total, zero_results: count, with_results: count,
    slow: count, failed: count, unindexed: count,
    max_ms: count,
    last_at: { type: DataTypes.DATE, allowNull: false },
  });
  // Admin views read every user's hours of a range.
  await q.addIndex('search_stats_hourly', ['hour_start'], { name: 'search_stats_hourly_hour' });
  await q.createTable('search_query_stats_daily', {
    user_id: userId,
    day_start: bucket,
    query: { type: DataTypes.STRING(500), allowNull: false, primaryKey: true },
    searches: count, total_ms: total, total_results: total, slow: count, slow_ms: total, zero_results: count, failed: count,
    last_at: { type: DataTypes.DATE, allowNull: false },
  });
  await q.createTable('search_table_stats_daily', {
    user_id: userId,
    day_start: bucket,
    // `searched`: tables a search read; `unindexed`: tables it read without a full-text index.
    kind: { type: DataTypes.STRING(16), allowNull: false, primaryKey: true },
    database_id: { type: DataTypes.STRING(64), allowNull: false, primaryKey: true },
    table_name: { type: DataTypes.STRING(255), allowNull: false, primaryKey: true },
    searches: count, slow: count,
  });
  await q.createTable('search_latency_daily', {
    user_id: userId,
    day_start: bucket,
    response_time_ms: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true },
    searches: count,
  });
  // performance.slowestQueries walks a user's searches from the slowest down.
  await q.addIndex('search_records', ['user_id', 'response_time_ms', 'created_at', 'id'], { name: 'search_records_user_slowest' });
  // Retention deletes by age alone.
  await q.addIndex('request_logs', ['created_at'], { name: 'request_logs_created_at' });
  // Admin system overview: registrations per bucket.
  await q.addIndex('users', ['created_at'], { name: 'users_created_at' });
  await rebuildRollups(q.sequelize);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('users', 'users_created_at');
  await q.removeIndex('request_logs', 'request_logs_created_at');
  await q.removeIndex('search_records', 'search_records_user_slowest');
  for (const table of ['search_latency_daily', 'search_table_stats_daily', 'search_query_stats_daily', 'search_stats_hourly']) await q.dropTable(table);
}
