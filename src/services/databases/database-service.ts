import type { ClientConfig } from 'pg';
import type { components } from '../../../generated/openapi.js';
import {
  ConnectorError, discoverSchema, isConnectorError, resolveSqlitePath, testConnection, testExecutor, userSqliteDir,
  DEFAULT_PORTS, type ConnectionSettings, type ExecutorOptions, type PoolManager, type SqlExecutor,
} from '../../connectors/index.js';
import { decryptSecret, encryptSecret } from '../../crypto/credentials.js';
import { AppError, notFound, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import { TIERS } from '../../rate-limit/index.js';
import type { DatabaseConnectionChanges, DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { UserCaller } from '../callers.js';
import type { PlanService } from '../accounts/plan-service.js';
import type { SqliteFileCopies } from './sqlite-file-copies.js';

type Database = components['schemas']['Database'];
type CreateDatabaseRequest = components['schemas']['CreateDatabaseRequest'];
type UpdateDatabaseRequest = components['schemas']['UpdateDatabaseRequest'];
type ConnectionTest = components['schemas']['ConnectionTestResponse']['data'];
type DatabaseSchema = components['schemas']['DatabaseSchemaResponse']['data'];
type DatabaseStatus = components['schemas']['DatabaseStatusResponse']['data'];

export interface DatabaseDeps {
  connections: DatabaseConnectionRepository;
  plans: Pick<PlanService, 'planOf'>;
  pools: PoolManager;
  executorOptions: ExecutorOptions;
  credentialsKey: Buffer;
  /** SQLITE_DATA_DIR: each user's SQLite files are in `<sqliteDataDir>/<userId>/` and nowhere else. */
  sqliteDataDir: string;
  /** This process's copies of the uploaded files, brought to the version the shared store holds before a read. */
  sqliteCopies: Pick<SqliteFileCopies, 'refresh'>;
  upgradeUrl: string;
  queryTimeoutMs: number;
  /** Called when a connection changes or goes, so cached search results and schemas of it are dropped. */
  onConnectionChanged(databaseId: string): void;
  /** Keeps the search index in step with the connections (src/search-index): sync new ones, drop removed ones. */
  index: IndexLifecycle;
  /** Failures of that background upkeep: logged, never failing the operation that caused them. */
  onError(error: unknown): void;
  /** Called when a user's list of connections changes (one added or removed), for `User.connectedDatabases`. */
  onConnectionsOfUserChanged(userId: string): void;
}

export interface IndexLifecycle {
  connected(record: DatabaseConnectionRecord): Promise<void>;
  changed(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): Promise<void>;
  removing(record: DatabaseConnectionRecord): Promise<void>;
}

/** Fields whose change means a different database: they are tested again before an update is saved. */
const connectionFields = ['host', 'port', 'database', 'username', 'password', 'ssl'] as const;

function invalid(path: string, message: string): AppError {
  return validationError([{ location: 'body', path, message }]);
}

/** A connector failure as our error; while saving a connection, a database that cannot be reached refuses the submission. */
export function fromConnectorError(error: ConnectorError, whileSaving: boolean, databaseId?: string): AppError {
  return new AppError(error.code, error.message, { ...error.details, ...(databaseId && { databaseId }) }, { rejectsSubmission: whileSaving });
}

/** Connected databases: owner-scoped CRUD, tested before saving, credentials encrypted at rest. */
export class DatabaseService {
  private readonly settingsByRecord = new WeakMap<DatabaseConnectionRecord, Promise<ConnectionSettings>>();

  constructor(private readonly deps: DatabaseDeps) {}

  toDatabase(record: DatabaseConnectionRecord): Database {
    return {
      id: record.id,
      name: record.name,
      engine: record.engine,
      host: record.host,
      port: record.port,
      database: record.database,
      username: record.username,
      ssl: record.ssl,
      environment: record.environment,
      tables: record.tables,
      indexing: { enabled: record.indexEnabled, syncIntervalMinutes: record.syncIntervalMinutes },
      status: record.status,
      lastTestedAt: record.lastTestedAt?.toISOString() ?? null,
      lastError: record.lastError ?? null,
      createdAt: record.createdAt.toISOString(),
      updatedAt: record.updatedAt.toISOString(),
    };
  }

  /** createDatabase */
  async create(caller: UserCaller, input: CreateDatabaseRequest): Promise<{ database: Database }> {
    const engine = input.engine ?? 'postgres';
    if (engine !== 'sqlite') {
      if (!input.host) throw invalid('/host', `is required for ${engine}`);
      if (!input.username) throw invalid('/username', `is required for ${engine}`);
    }
    await this.checkTierAllowsAnother(caller);
    const draft = {
      engine,
      host: engine === 'sqlite' ? null : input.host!.trim(),
      port: engine === 'sqlite' ? null : (input.port ?? DEFAULT_PORTS[engine]),
      database: input.database.trim(),
      username: engine === 'sqlite' ? null : input.username!,
      password: engine === 'sqlite' ? null : (input.password ?? null),
      ssl: engine === 'sqlite' ? false : (input.ssl ?? false),
      tables: input.tables ?? null,
    };
    const test = await this.testSettings(await this.saveable(draft, caller.user.id));
    const id = newId('db');
    const record = await this.deps.connections.create({
      id,
      userId: caller.user.id,
      name: input.name.trim(),
      engine,
      environment: input.environment ?? 'live',
      ...this.testedSettings(draft, id, test.testedAt),
      indexEnabled: input.indexing?.enabled ?? true,
      syncIntervalMinutes: input.indexing?.syncIntervalMinutes === undefined ? 60 : input.indexing.syncIntervalMinutes,
      nextSyncAt: null,
    });
    this.deps.onConnectionsOfUserChanged(caller.user.id);
    await this.deps.index.connected(record).catch((error: unknown) => this.deps.onError(error));
    return { database: this.toDatabase((await this.deps.connections.findById(record.id)) ?? record) };
  }

  /** listDatabases */
  async list(caller: UserCaller, environment?: 'live' | 'test'): Promise<{ databases: Database[]; total: number }> {
    const records = await this.deps.connections.listOwned(caller.user.id, environment);
    return { databases: records.map((record) => this.toDatabase(record)), total: records.length };
  }

  /** getDatabase */
  async get(caller: UserCaller, id: string): Promise<{ database: Database }> {
    return { database: this.toDatabase(await this.owned(caller.user.id, id)) };
  }

  /** updateDatabase: changed connection settings are tested first; nothing changes if the test fails. */
  async update(caller: UserCaller, id: string, input: UpdateDatabaseRequest): Promise<{ database: Database }> {
    const record = await this.owned(caller.user.id, id);
    const reconnects = connectionFields.some((field) => input[field] !== undefined) || input.tables !== undefined;
    const changes: DatabaseConnectionChanges = {};
    if (input.name !== undefined) changes.name = input.name.trim();
    if (input.environment !== undefined) changes.environment = input.environment;
    if (input.indexing?.enabled !== undefined) changes.indexEnabled = input.indexing.enabled;
    if (input.indexing?.syncIntervalMinutes !== undefined) {
      changes.syncIntervalMinutes = input.indexing.syncIntervalMinutes;
      changes.nextSyncAt = null; // the new schedule starts now
    }
    if (reconnects) {
      const draft = {
        engine: record.engine,
        host: record.engine === 'sqlite' ? null : (input.host?.trim() ?? record.host),
        port: record.engine === 'sqlite' ? null : (input.port ?? record.port),
        database: input.database?.trim() ?? record.database,
        username: record.engine === 'sqlite' ? null : (input.username ?? record.username),
        password: record.engine === 'sqlite' ? null : input.password !== undefined ? input.password : this.passwordOf(record),
        ssl: record.engine === 'sqlite' ? false : (input.ssl ?? record.ssl),
        tables: input.tables !== undefined ? input.tables : record.tables,
      };
      const test = await this.testSettings(await this.saveable(draft, record.userId));
      Object.assign(changes, {
        ...this.testedSettings(draft, id, test.testedAt),
        schemaCache: null,
        schemaDiscoveredAt: null,
      } satisfies DatabaseConnectionChanges);
    }
    const updated = await this.deps.connections.update(id, changes);
    if (reconnects) await this.deps.pools.close(id);
    this.deps.onConnectionChanged(id);
    await this.deps.index.changed(record, updated!, reconnects).catch((error: unknown) => this.deps.onError(error));
    return { database: this.toDatabase(updated!) };
  }

  /** deleteDatabase: forgets the connection and its credentials; nothing in the user's database is touched. */
  async remove(caller: UserCaller, id: string): Promise<{ databaseId: string; message: string }> {
    const record = await this.owned(caller.user.id, id);
    await this.deps.index.removing(record).catch((error: unknown) => this.deps.onError(error));
    await this.deps.connections.delete(id);
    this.deps.onConnectionsOfUserChanged(caller.user.id);
    await this.deps.pools.close(id);
    this.deps.onConnectionChanged(id);
    return { databaseId: id, message: 'Database connection removed.' };
  }

  /** testDatabaseConnection: a failure is a result; the connection's status follows it. */
  async test(caller: UserCaller, id: string): Promise<ConnectionTest> {
    const record = await this.owned(caller.user.id, id);
    let result: ConnectionTest;
    try {
      result = await testExecutor(await this.executorFor(record), this.deps.queryTimeoutMs);
    } catch (error) {
      if (!isConnectorError(error)) throw error;
      result = { ok: false, latencyMs: 0, serverVersion: null, testedAt: new Date().toISOString(), error: error.toSafeError() };
    }
    await this.deps.connections.update(id, {
      status: result.ok ? 'connected' : 'error',
      lastTestedAt: new Date(result.testedAt),
      lastError: result.error,
    });
    if (!result.ok) await this.deps.pools.close(id);
    return result;
  }

  /** getDatabaseSchema: cached in the store; `refresh` discovers again. */
  async schema(caller: UserCaller, id: string, refresh: boolean): Promise<DatabaseSchema> {
    const record = await this.owned(caller.user.id, id);
    const tables = refresh || !record.schemaCache ? await this.discover(record) : record.schemaCache;
    const fresh = refresh || !record.schemaCache ? await this.deps.connections.findById(id) : record;
    return { databaseId: id, engine: record.engine, discoveredAt: (fresh?.schemaDiscoveredAt ?? new Date()).toISOString(), tables };
  }

  /** getDatabaseStatus: what is known, without connecting. */
  async status(caller: UserCaller, id: string): Promise<DatabaseStatus> {
    const record = await this.owned(caller.user.id, id);
    return {
      databaseId: id,
      status: record.status,
      lastTestedAt: record.lastTestedAt?.toISOString() ?? null,
      lastError: record.lastError ?? null,
      pool: this.deps.pools.stats(id),
    };
  }

  /** The owner's connection or the same 404 as an unknown id. */
  async owned(userId: string, id: string): Promise<DatabaseConnectionRecord> {
    const record = await this.deps.connections.findOwned(userId, id);
    if (!record) throw notFound('database connection', id);
    return record;
  }

  /**
   * The pooled executor of a saved connection (search uses it too). A SQLite connection's file is first brought to
   * the version the store holds (`latestFile`: asked of the store whatever this process saw a moment ago, as a sync
   * must read the file it was started for).
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

  /** Settings of a replication connection to a saved PostgreSQL or MySQL/MariaDB connection's server (stream mode). */
  async replicationConfigFor(record: DatabaseConnectionRecord): Promise<ClientConfig> {
    return this.deps.pools.replicationConfig(await this.settingsOf(record));
  }

  /** The table schemas of a connection: the cached discovery, or a fresh one when none is cached or `fresh` asks. */
  async tablesOf(record: DatabaseConnectionRecord, fresh = false): Promise<components['schemas']['TableSchema'][]> {
    return (!fresh && record.schemaCache) || this.discover(record);
  }

  private async discover(record: DatabaseConnectionRecord) {
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

  private passwordOf(record: DatabaseConnectionRecord): string | null {
    return record.passwordEncrypted ? decryptSecret(record.passwordEncrypted, this.deps.credentialsKey, record.id) : null;
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

  /** Settings the connectors accept; a SQLite path is resolved inside its owner's own folder or refused. */
  private async settingsFrom(draft: ConnectionSettings, ownerId: string): Promise<ConnectionSettings> {
    if (draft.engine !== 'sqlite') return draft;
    await this.deps.sqliteCopies.refresh(ownerId, draft.database);
    return { ...draft, database: await resolveSqlitePath(draft.database, userSqliteDir(this.deps.sqliteDataDir, ownerId)) };
  }

  /** Settings about to be saved: a refused or missing SQLite file is the caller's input (400, 422). */
  private async saveable(draft: ConnectionSettings, ownerId: string): Promise<ConnectionSettings> {
    try {
      return await this.settingsFrom(draft, ownerId);
    } catch (error) {
      if (isConnectorError(error)) throw fromConnectorError(error, true);
      throw error;
    }
  }

  /** What a connection stores once its settings passed the test: the password only encrypted. */
  private testedSettings(draft: ConnectionSettings, id: string, testedAt: string) {
    return {
      host: draft.host,
      port: draft.port,
      database: draft.database,
      username: draft.username,
      passwordEncrypted: draft.password === null ? null : encryptSecret(draft.password, this.deps.credentialsKey, id),
      ssl: draft.ssl,
      tables: draft.tables,
      status: 'connected' as const,
      lastTestedAt: new Date(testedAt),
      lastError: null,
    };
  }

  private async testSettings(settings: ConnectionSettings) {
    const result = await testConnection(settings, this.deps.executorOptions);
    if (!result.error) return result;
    throw new AppError(result.error.code, result.error.message, { engine: settings.engine, host: settings.host, port: settings.port }, { rejectsSubmission: true });
  }

  /** Databases per plan (free 3, pro 25, enterprise unlimited), by the caller's account plan. */
  private async checkTierAllowsAnother(caller: UserCaller): Promise<void> {
    const tier = await this.deps.plans.planOf(caller.user.id);
    const limit = TIERS[tier].databases;
    if (limit === null) return;
    if ((await this.deps.connections.countOwned(caller.user.id)) >= limit) {
      throw new AppError('TIER_LIMIT_EXCEEDED', `The ${tier} tier allows ${limit} connected databases. Upgrade for more, or remove one first.`, {
        tier, limit, upgradeUrl: this.deps.upgradeUrl,
      });
    }
  }
}
