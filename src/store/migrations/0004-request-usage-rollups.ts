import { DataTypes, type QueryInterface, type Transaction } from 'sequelize';

/**
 * API-key usage as per-minute roll-ups (`request_usage_minutely`) instead of one `request_logs` row per request.
 * Key usage and rate-limit analytics only ever read counts and averages per minute or coarser; a row per request
 * grew by tens of millions an hour on a busy server, and writing it was a sixth of a key request's CPU.
 * The existing rows are folded into the roll-ups and the old table dropped, in one transaction.
 */
export async function up(q: QueryInterface): Promise<void> {
  const sequelize = q.sequelize;
  const minute = sequelize.getDialect() === 'postgres'
    ? `(date_trunc('minute', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`
    // Sequelize stores SQLite timestamps as `YYYY-MM-DD HH:MM:SS.SSS +00:00`: the minute uses the same text.
    : `strftime('%Y-%m-%d %H:%M:00.000 +00:00', created_at)`;
  await sequelize.transaction(async (transaction) => {
    await createUsageTable(q, transaction);
    await sequelize.query(
      `INSERT INTO request_usage_minutely (key_id, user_id, endpoint, minute_start, requests, failed, rate_limited, counted, total_ms)
       SELECT key_id, MAX(user_id), endpoint, ${minute}, COUNT(*),
         SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END), SUM(CASE WHEN rate_limited THEN 1 ELSE 0 END),
         SUM(CASE WHEN counted AND NOT rate_limited THEN 1 ELSE 0 END), SUM(duration_ms)
       FROM request_logs WHERE key_id IS NOT NULL GROUP BY key_id, endpoint, ${minute}`,
      { transaction },
    );
    await q.dropTable('request_logs', { transaction });
  });
}

/** Restores the request_logs table, empty: single requests cannot be recovered from their counts. */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.transaction(async (transaction) => {
    await q.createTable('request_logs', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      key_id: { type: DataTypes.STRING(40), allowNull: true },
      user_id: { type: DataTypes.STRING(40), allowNull: true },
      endpoint: { type: DataTypes.STRING(120), allowNull: false },
      status: { type: DataTypes.INTEGER, allowNull: false },
      duration_ms: { type: DataTypes.INTEGER, allowNull: false },
      rate_limited: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      counted: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    }, { transaction });
    await q.addIndex('request_logs', ['key_id', 'created_at'], { transaction });
    await q.addIndex('request_logs', ['user_id', 'created_at'], { transaction });
    await q.addIndex('request_logs', ['created_at'], { name: 'request_logs_created_at', transaction });
    await q.dropTable('request_usage_minutely', { transaction });
  });
}

async function createUsageTable(q: QueryInterface, transaction: Transaction): Promise<void> {
  await q.createTable('request_usage_minutely', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    key_id: { type: DataTypes.STRING(40), allowNull: false },
    user_id: { type: DataTypes.STRING(40), allowNull: true },
    endpoint: { type: DataTypes.STRING(120), allowNull: false },
    minute_start: { type: DataTypes.DATE, allowNull: false },
    requests: { type: DataTypes.INTEGER, allowNull: false },
    failed: { type: DataTypes.INTEGER, allowNull: false },
    rate_limited: { type: DataTypes.INTEGER, allowNull: false },
    counted: { type: DataTypes.INTEGER, allowNull: false },
    total_ms: { type: DataTypes.BIGINT, allowNull: false },
  }, { transaction });
  // The upsert's conflict target (one row per key, endpoint and minute), and the readers' key + time range.
  await q.addIndex('request_usage_minutely', ['key_id', 'minute_start', 'endpoint'], { unique: true, name: 'request_usage_key_minute_endpoint', transaction });
  await q.addIndex('request_usage_minutely', ['minute_start'], { name: 'request_usage_minute', transaction });
}
