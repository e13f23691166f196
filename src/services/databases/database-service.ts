import type { ClientConfig } from 'pg';
import type { components } from '../../../generated/openapi.js';
import {
  isConnectorError, testConnection, testExecutor,
  DEFAULT_PORTS, type ConnectionSettings, type ExecutorOptions, type PoolManager, type SqlExecutor,
} from '../../connectors/index.js';
import { encryptSecret } from '../../crypto/credentials.js';
import { AppError, notFound, validationError } from '../../errors/app-error.js';
import type { EventPublisher } from '../../lib/domain-events.js';
import { newId } from '../../lib/ids.js';
import { TIERS, type TierName } from '../../rate-limit/index.js';
import type { DatabaseConnectionChanges, DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { UserCaller } from '../callers.js';
import { syncsEveryTable } from '../../rules/connection-changes.js';
import type { ConnectionLifecycle } from './connection-lifecycle.js';
import type { ConnectionSources } from './connection-sources.js';
import { fromConnectorError } from './connector-errors.js';
import type { ConnectionCatalog } from '../../search-core/connection-catalog.js';

export { fromConnectorError };

type Database = components['schemas']['Database'];
type CreateDatabaseRequest = components['schemas']['CreateDatabaseRequest'];
type UpdateDatabaseRequest = components['schemas']['UpdateDatabaseRequest'];
type ConnectionTest = components['schemas']['ConnectionTestResponse']['data'];
type DatabaseSchema = components['schemas']['DatabaseSchemaResponse']['data'];
type DatabaseStatus = components['schemas']['DatabaseStatusResponse']['data'];

export interface DatabaseDeps {
  connections: DatabaseConnectionRepository;
  /** The account's plan, which bounds how many databases it connects. */
  plans: { planOf(userId: string): Promise<TierName> };
  pools: PoolManager;
  /** Reading the saved connections' databases (executors, schemas). */
  sources: ConnectionSources;
  /** The connections' tables as search and indexing read them: a refresh here is seen by both. */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  executorOptions: ExecutorOptions;
  credentialsKey: Buffer;
  upgradeUrl: string;
  queryTimeoutMs: number;
  /** `connection.changed` when a connection changes or goes: every process drops its cached pages and schemas. */
  events: EventPublisher;
  /** Keeps the search index in step with the connections (src/search-index): sync new ones, drop removed ones. */
  lifecycle: Pick<ConnectionLifecycle, 'connected' | 'changed' | 'removing'>;
  /** Failures of that upkeep: logged, never failing the operation that caused them. */
  onError(error: unknown): void;
  /** Called when a user's list of connections changes (one added or removed), for `User.connectedDatabases`. */
  onConnectionsOfUserChanged(userId: string): void;
  now?: () => number;
}

/** Fields whose change means a different database: they are tested again before an update is saved. */
const connectionFields = ['host', 'port', 'database', 'username', 'password', 'ssl'] as const;

/**
 * When a schedule that starts now next syncs: one interval on. A schedule starts with a sync of every table (the
 * connection is made, indexing turned on, another database named) or when its interval changes; a scheduled sync
 * right after the sync that started it would read every table again for nothing (at a million rows, minutes of the
 * user's database and of Quarry's). Null: no schedule.
 */
export function nextScheduledSync(now: number, minutes: number | null): Date | null {
  return minutes === null ? null : new Date(now + minutes * 60_000);
}

function invalid(path: string, message: string): AppError {
  return validationError([{ location: 'body', path, message }]);
}

/** Connected databases: owner-scoped CRUD, tested before saving, credentials encrypted at rest. */
export class DatabaseService {
  private readonly now: () => number;

  constructor(private readonly deps: DatabaseDeps) {
    this.now = deps.now ?? Date.now;
  }

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
    const syncIntervalMinutes = input.indexing?.syncIntervalMinutes === undefined ? 60 : input.indexing.syncIntervalMinutes;
    const record = await this.deps.connections.create({
      id,
      userId: caller.user.id,
      name: input.name.trim(),
      engine,
      environment: input.environment ?? 'live',
      ...this.testedSettings(draft, id, test.testedAt),
      indexEnabled: input.indexing?.enabled ?? true,
      syncIntervalMinutes,
      // The connect sync is the schedule's first.
      nextSyncAt: nextScheduledSync(this.now(), syncIntervalMinutes),
    });
    this.deps.onConnectionsOfUserChanged(caller.user.id);
    await this.deps.lifecycle.connected(record).catch((error: unknown) => this.deps.onError(error));
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
    if (input.indexing?.syncIntervalMinutes !== undefined) changes.syncIntervalMinutes = input.indexing.syncIntervalMinutes;
    if (reconnects) {
      const draft = {
        engine: record.engine,
        host: record.engine === 'sqlite' ? null : (input.host?.trim() ?? record.host),
        port: record.engine === 'sqlite' ? null : (input.port ?? record.port),
        database: input.database?.trim() ?? record.database,
        username: record.engine === 'sqlite' ? null : (input.username ?? record.username),
        password: record.engine === 'sqlite' ? null : input.password !== undefined ? input.password : this.deps.sources.passwordOf(record),
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
    // The schedule starts again now when its interval changes or this change syncs every table (the lifecycle's rule).
    const after = { ...record, ...changes };
    if (changes.syncIntervalMinutes !== undefined || syncsEveryTable(record, after, reconnects)) {
      changes.nextSyncAt = nextScheduledSync(this.now(), after.syncIntervalMinutes);
    }
    const updated = await this.deps.connections.update(id, changes);
    if (reconnects) await this.deps.pools.close(id);
    this.deps.events.publish('connection.changed', { databaseId: id });
    await this.deps.lifecycle.changed(record, updated!, reconnects).catch((error: unknown) => this.deps.onError(error));
    return { database: this.toDatabase(updated!) };
  }

  /** deleteDatabase: forgets the connection and its credentials; nothing in the user's database is touched. */
  async remove(caller: UserCaller, id: string): Promise<{ databaseId: string; message: string }> {
    const record = await this.owned(caller.user.id, id);
    await this.deps.lifecycle.removing(record).catch((error: unknown) => this.deps.onError(error));
    await this.deps.connections.delete(id);
    this.deps.onConnectionsOfUserChanged(caller.user.id);
    await this.deps.pools.close(id);
    this.deps.events.publish('connection.changed', { databaseId: id });
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
    const tables = refresh || !record.schemaCache ? await this.deps.catalog.tables(record, true) : record.schemaCache;
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

  /** The pooled executor of a saved connection (search uses it too); see ConnectionSources. */
  executorFor(record: DatabaseConnectionRecord, options: { latestFile?: boolean } = {}): Promise<SqlExecutor> {
    return this.deps.sources.executorFor(record, options);
  }

  /** Settings of a replication connection to a saved PostgreSQL or MySQL/MariaDB connection's server (stream mode). */
  replicationConfigFor(record: DatabaseConnectionRecord): Promise<ClientConfig> {
    return this.deps.sources.replicationConfigFor(record);
  }

  /** The table schemas of a connection: the cached discovery, or a fresh one when none is cached or `fresh` asks. */
  tablesOf(record: DatabaseConnectionRecord, fresh = false): Promise<components['schemas']['TableSchema'][]> {
    return this.deps.sources.tablesOf(record, fresh);
  }

  /** Settings about to be saved: a refused or missing SQLite file is the caller's input (400, 422). */
  private async saveable(draft: ConnectionSettings, ownerId: string): Promise<ConnectionSettings> {
    try {
      return await this.deps.sources.settingsFrom(draft, ownerId);
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
