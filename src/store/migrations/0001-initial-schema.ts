import { DataTypes, type QueryInterface } from 'sequelize';

const id = { type: DataTypes.STRING(40), primaryKey: true, allowNull: false };
const createdAt = { type: DataTypes.DATE, allowNull: false, field: 'created_at' };
const updatedAt = { type: DataTypes.DATE, allowNull: false, field: 'updated_at' };

export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('users', {
    id,
    email: { type: DataTypes.STRING(254), allowNull: false, unique: true },
    name: { type: DataTypes.STRING(100), allowNull: false },
    password_hash: { type: DataTypes.STRING(255), allowNull: false },
    role: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'user' },
    disabled_at: { type: DataTypes.DATE, allowNull: true },
    last_active_at: { type: DataTypes.DATE, allowNull: false },
    created_at: createdAt,
    updated_at: updatedAt,
  });

  await q.createTable('sessions', {
    id,
    user_id: { type: DataTypes.STRING(40), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    refresh_jti: { type: DataTypes.STRING(64), allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    ended_at: { type: DataTypes.DATE, allowNull: true },
    created_at: createdAt,
    updated_at: updatedAt,
  });
  await q.addIndex('sessions', ['user_id']);

  await q.createTable('api_keys', {
    id,
    user_id: { type: DataTypes.STRING(40), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.STRING(100), allowNull: false },
    public_id: { type: DataTypes.STRING(16), allowNull: false, unique: true },
    secret_hash: { type: DataTypes.STRING(64), allowNull: false },
    environment: { type: DataTypes.STRING(8), allowNull: false },
    permissions: { type: DataTypes.JSON, allowNull: false },
    tier: { type: DataTypes.STRING(16), allowNull: false },
    custom_limits: { type: DataTypes.JSON, allowNull: true },
    // Set only on the key made by management setup; unique, so two racing setups cannot both succeed.
    initial_for_user: { type: DataTypes.STRING(40), allowNull: true, unique: true },
    expires_at: { type: DataTypes.DATE, allowNull: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    replaced_by_id: { type: DataTypes.STRING(40), allowNull: true },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    usage_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    created_at: createdAt,
    updated_at: updatedAt,
  });
  await q.addIndex('api_keys', ['user_id']);

  await q.createTable('database_connections', {
    id,
    user_id: { type: DataTypes.STRING(40), allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.STRING(100), allowNull: false },
    engine: { type: DataTypes.STRING(16), allowNull: false },
    host: { type: DataTypes.STRING(253), allowNull: true },
    port: { type: DataTypes.INTEGER, allowNull: true },
    database: { type: DataTypes.STRING(255), allowNull: false },
    username: { type: DataTypes.STRING(128), allowNull: true },
    password_encrypted: { type: DataTypes.TEXT, allowNull: true },
    ssl: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    environment: { type: DataTypes.STRING(8), allowNull: false },
    tables: { type: DataTypes.JSON, allowNull: true },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'disconnected' },
    last_tested_at: { type: DataTypes.DATE, allowNull: true },
    last_error: { type: DataTypes.JSON, allowNull: true },
    schema_cache: { type: DataTypes.JSON, allowNull: true },
    schema_discovered_at: { type: DataTypes.DATE, allowNull: true },
    created_at: createdAt,
    updated_at: updatedAt,
  });
  await q.addIndex('database_connections', ['user_id']);

  // One row per API-key request, written in batches off the request path: feeds key usage and rate-limit analytics.
  await q.createTable('request_logs', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    key_id: { type: DataTypes.STRING(40), allowNull: true },
    user_id: { type: DataTypes.STRING(40), allowNull: true },
    endpoint: { type: DataTypes.STRING(120), allowNull: false },
    status: { type: DataTypes.INTEGER, allowNull: false },
    duration_ms: { type: DataTypes.INTEGER, allowNull: false },
    rate_limited: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    // False for requests that do not count against the key's limit (rate-limit status, health).
    counted: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_at: createdAt,
  });
  await q.addIndex('request_logs', ['key_id', 'created_at']);
  await q.addIndex('request_logs', ['user_id', 'created_at']);

  // One row per search: feeds history, suggestions, trends and analytics.
  await q.createTable('search_records', {
    id,
    user_id: { type: DataTypes.STRING(40), allowNull: false },
    key_id: { type: DataTypes.STRING(40), allowNull: true },
    query: { type: DataTypes.STRING(500), allowNull: false },
    search_mode: { type: DataTypes.STRING(16), allowNull: false },
    databases: { type: DataTypes.JSON, allowNull: false },
    tables: { type: DataTypes.JSON, allowNull: true },
    result_count: { type: DataTypes.INTEGER, allowNull: false },
    response_time_ms: { type: DataTypes.INTEGER, allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    unindexed_tables: { type: DataTypes.JSON, allowNull: true },
    created_at: createdAt,
  });
  await q.addIndex('search_records', ['user_id', 'created_at']);
  await q.addIndex('search_records', ['created_at']);

  await q.createTable('rate_limit_violations', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    key_id: { type: DataTypes.STRING(40), allowNull: false },
    reason: { type: DataTypes.STRING(200), allowNull: false },
    started_at: { type: DataTypes.DATE, allowNull: false },
    blocked_until: { type: DataTypes.DATE, allowNull: false },
    affected_requests: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
  });
  await q.addIndex('rate_limit_violations', ['key_id', 'started_at']);

  // Small facts about the installation itself, e.g. a check value proving CREDENTIALS_KEY is the right key.
  await q.createTable('settings', {
    key: { type: DataTypes.STRING(64), primaryKey: true },
    value: { type: DataTypes.TEXT, allowNull: false },
  });
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of ['settings', 'rate_limit_violations', 'search_records', 'request_logs', 'database_connections', 'api_keys', 'sessions', 'users']) {
    await q.dropTable(table);
  }
}
