/**
 * Reading a saved connection's database: its decrypted settings, its pooled executor, its replication settings and
 * its table schemas (cached in the store, discovered again on demand). Search, sync jobs and the index's upkeep read
 * through this; it needs nothing from them, so they can be made before the service that manages the connections.
 */
import type { ClientConfig } from 'pg';
import type { components } from '../../../generated/openapi.js';
import {
  discoverSchema, isConnectorError, resolveSqlitePath, userSqliteDir, type ConnectionSettings, type PoolManager, type SqlExecutor,
} from '../../connectors/index.js';
import { decryptSecret } from '../../crypto/credentials.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import { fromConnectorError } from './connector-errors.js';
import type { SqliteFileCopies } from './sqlite-file-copies.js';

export interface ConnectionSourcesDeps {
  connections: Pick<DatabaseConnectionRepository, 'update'>;
  pools: Pick<PoolManager, 'get' | 'replicationConfig'>;
  credentialsKey: Buffer;
  /** SQLITE_DATA_DIR: each user's SQLite files are in `<sqliteDataDir>/<userId>/` and nowhere else. */
  sqliteDataDir: string;
  /** This process's copies of the uploaded files, brought to the version the shared store holds before a read. */
  sqliteCopies: Pick<SqliteFileCopies, 'refresh'>;
  queryTimeoutMs: number;
}

export class ConnectionSources {
  private readonly settingsByRecord = new WeakMap<DatabaseConnectionRecord, Promise<ConnectionSettings>>();

  constructor(private readonly deps: ConnectionSourcesDeps) {}

  /**
   * The pooled executor of a saved connection. A SQLite connection's file is first brought to the version the store
   * holds (`latestFile`: asked of the store whatever this process saw a moment ago, as a sync must read the file it
   * was started for).
   */
  async executorFor(record: DatabaseConnectionRecord, options: { latestFile?: boolean } = {}): Promise<SqlExecutor> {
    if (record.engine === 'sqlite') await this.deps.sqliteCopies.refresh(record.userId, record.database, { latest: options.latestFile });
    // Records are immutable snapshots (an edit makes a new one), so their decrypted settings are kept with them:
    // every search would otherwise decrypt the password and resolve the SQLite path again.
    let settings = this.settingsByRecord.get(record);
    if (!settings) {
      settings = this.settingsOf(record);
      this.settingsByRecord.set(record, settings);
      settings.catch(() => this.settingsByRecord.delete(record));
    }
    return this.deps.pools.get(record.id, await settings);
  }

  /** Settings of a replication connection to a saved PostgreSQL connection's server (stream mode). */
  async replicationConfigFor(record: DatabaseConnectionRecord): Promise<ClientConfig> {
    return this.deps.pools.replicationConfig(await this.settingsOf(record));
  }

  /** The table schemas of a connection: the cached discovery, or a fresh one when none is cached or `fresh` asks. */
  async tablesOf(record: DatabaseConnectionRecord, fresh = false): Promise<components['schemas']['TableSchema'][]> {
    return (!fresh && record.schemaCache) || this.discover(record);
  }

  /** Discovers the schema and keeps it in the store with the connection's status; a failure is the connector's error. */
  async discover(record: DatabaseConnectionRecord) {
    try {
      const executor = await this.executorFor(record);
      const discovered = await discoverSchema(executor, { tables: record.tables, timeoutMs: this.deps.queryTimeoutMs });
      await this.deps.connections.update(record.id, { schemaCache: discovered.tables, schemaDiscoveredAt: new Date(), status: 'connected', lastError: null });
      return discovered.tables;
    } catch (error) {
      if (!isConnectorError(error)) throw error;
      await this.deps.connections.update(record.id, { status: 'error', lastError: error.toSafeError() });
      throw fromConnectorError(error, false, record.id);
    }
  }

  passwordOf(record: DatabaseConnectionRecord): string | null {
    return record.passwordEncrypted ? decryptSecret(record.passwordEncrypted, this.deps.credentialsKey, record.id) : null;
  }

  /** Settings the connectors accept; a SQLite path is resolved inside its owner's own folder or refused. */
  async settingsFrom(draft: ConnectionSettings, ownerId: string): Promise<ConnectionSettings> {
    if (draft.engine !== 'sqlite') return draft;
    await this.deps.sqliteCopies.refresh(ownerId, draft.database);
    return { ...draft, database: await resolveSqlitePath(draft.database, userSqliteDir(this.deps.sqliteDataDir, ownerId)) };
  }

  /** A saved connection's settings; a SQLite file that is gone (or out of reach) is the connector's error. */
  private async settingsOf(record: DatabaseConnectionRecord): Promise<ConnectionSettings> {
    return this.settingsFrom({
      engine: record.engine,
      host: record.host,
      port: record.port,
      database: record.database,
      username: record.username,
      password: this.passwordOf(record),
      ssl: record.ssl,
      tables: record.tables,
    }, record.userId);
  }
}
