/**
 * The composition root: the one place that makes Quarry's services, and the search index they share, from the
 * infrastructure the server built (store, Redis, rate-limit store, invalidation bus). Every `new` of a service is
 * here; handlers reach services only through what `createServices` returns. Wiring only: no rule of the domain lives
 * in this file.
 */
import { createHmac } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { Config } from './config/config.js';
import type { Logger } from './lib/logger.js';
import type { RateLimitStore, TierName } from './rate-limit/index.js';
import { apiKeyRepository } from './repositories/api-key-repository.js';
import { databaseConnectionRepository, type DatabaseConnectionRecord } from './repositories/database-connection-repository.js';
import { requestUsageRepository } from './repositories/request-usage-repository.js';
import { sqliteFileRepository } from './repositories/sqlite-file-repository.js';
import { sqliteUploadReservationRepository } from './repositories/sqlite-upload-reservation-repository.js';
import { searchRecordRepository } from './repositories/search-record-repository.js';
import { searchStatsRepository } from './repositories/search-stats-repository.js';
import { sessionRepository } from './repositories/session-repository.js';
import { userRepository } from './repositories/user-repository.js';
import { violationRepository } from './repositories/violation-repository.js';
import { isRowRejected, isStoreUnavailable } from './store/failures.js';
import type { Migrator } from './store/migrator.js';
import type { InvalidationBus } from './lib/invalidation-bus.js';
import { RedisOutageLog } from './lib/redis-outage.js';
import { AccountCache } from './services/accounts/account-cache.js';
import { KeyCache } from './services/keys/key-cache.js';
import { KeyUsageCache } from './services/rate-limit/key-usage-cache.js';
import { HistoryCache } from './services/search/history-cache.js';
import { PoolManager } from './connectors/index.js';
import { AccountsService } from './services/accounts/accounts-service.js';
import { AdminAnalyticsService } from './services/analytics/admin-analytics-service.js';
import { AnalyticsExporter } from './services/analytics/analytics-export.js';
import { AnalyticsService } from './services/analytics/analytics-service.js';
import { DatabaseService } from './services/databases/database-service.js';
import { ApiKeyService } from './services/keys/api-key-service.js';
import { HealthService } from './services/health/health-service.js';
import { KeyUsageService } from './services/keys/key-usage-service.js';
import { LimitsService } from './services/rate-limit/limits-service.js';
import { MigrationService } from './services/management/migration-service.js';
import { PlanService } from './services/accounts/plan-service.js';
import { RateLimitService } from './services/rate-limit/rate-limit-service.js';
import { RetentionService } from './services/analytics/retention-service.js';
import { SearchHistoryService, type History } from './services/search/search-history-service.js';
import { SearchRecorder } from './services/search/search-recorder.js';
import { SearchService } from './services/search/search-service.js';
import { SearchCatalog } from './services/search/search-catalog.js';
import { LiveEngine } from './services/search/live-search.js';
import { IndexEngine } from './search-index/index-engine.js';
import { FRESH_MS, OutageReads } from './services/search/outage-reads.js';
import { SqliteFileCopies } from './services/databases/sqlite-file-copies.js';
import { SqliteFileService } from './services/databases/sqlite-file-service.js';
import { SuggestionService } from './services/search/suggestion-service.js';
import { MemoryResultCache, NoResultCache } from './services/search/result-cache.js';
import { RedisResultCache } from './services/search/result-cache-redis.js';
import { searchSuggestionRepository } from './repositories/search-suggestion-repository.js';
import { TokenService } from './services/accounts/token-service.js';
import { UsageRecorder } from './services/rate-limit/usage-recorder.js';
import { ViolationRecorder } from './services/rate-limit/violation-recorder.js';
import { createEmbeddingProvider, EmbeddingError, type EmbeddingProvider } from './embeddings/index.js';
import { AppError } from './errors/app-error.js';
import { indexJobRepository } from './repositories/index-job-repository.js';
import { indexTableRepository } from './repositories/index-table-repository.js';
import { IndexStore } from './search-index/index-store.js';
import { IndexJobRunner } from './search-index/job-runner.js';
import { ChangePoller } from './search-index/changes/poller.js';
import { dropStream, slotLagBytes, streamName } from './search-index/changes/pg-stream.js';
import { ChangeStreamer } from './search-index/changes/streamer.js';
import { INDEX_ROWS_PER_TABLE } from './services/accounts/plan-limits.js';
import { IndexSchedule } from './services/indexing/index-schedule.js';
import { IndexService } from './services/indexing/index-service.js';

export interface Infrastructure {
  config: Config;
  logger: Logger;
  sequelize: Sequelize;
  migrator: Migrator;
  rateLimitStore: RateLimitStore;
  /** Cross-process cache invalidation (Redis pub/sub when configured). */
  bus: InvalidationBus;
  /** Where Redis users report losing and regaining Redis (one log line per outage edge). */
  redisOutages?: RedisOutageLog;
  /** Time source for the rate limits; tests move it instead of sleeping. */
  now?: () => number;
  /** The embedding model (tests may supply their own); by default the one EMBEDDINGS_PROVIDER configures. */
  embeddings?: EmbeddingProvider;
}

/**
 * Accounts and plans over the store, and the caches they tell of a change (through the bus, so every process drops
 * its copy): what the server and the operator's commands share.
 */
function accountServices(config: Config, bus: InvalidationBus) {
  // Through a store outage a recently verified key keeps authenticating (STORE_OUTAGE_GRACE_MS); only an outage.
  const keyCache = new KeyCache(bus, 5_000, undefined, undefined, { graceMs: config.storeOutageGraceMs, isOutage: isStoreUnavailable });
  const accountCache = new AccountCache(bus, 5_000);
  const tokens = new TokenService(config.jwt);
  // Account plans: what an account may use, never the best tier among its own keys.
  const plans = new PlanService({
    users: userRepository, upgradeUrl: config.upgradeUrl, view: (user) => accounts.toUser(user), onUserChanged: (userId) => keyCache.userChanged(userId),
  });
  const accounts = new AccountsService({
    users: userRepository,
    sessions: sessionRepository,
    tokens,
    sessionMaxAgeSeconds: config.jwt.sessionMaxAge,
    cache: accountCache,
    connectedDatabaseIds: (userId) => databaseConnectionRepository.listIdsForUser(userId),
  });
  return { keyCache, accountCache, plans, accounts };
}

/**
 * What an operator's command on accounts needs (`npm run user`): accounts and plans, nothing that serves requests,
 * runs in the background or reaches the users' databases.
 */
export function createOperatorServices(infra: Pick<Infrastructure, 'config' | 'bus'>) {
  const { plans, accounts } = accountServices(infra.config, infra.bus);
  return { plans, accounts };
}

export type OperatorServices = ReturnType<typeof createOperatorServices>;

/** The composition root: every service, wired once per server. Handlers reach services only through this. */
export function createServices(infra: Infrastructure) {
  const { config, logger, sequelize, migrator, rateLimitStore, bus, now } = infra;
  const embeddings = infra.embeddings ?? createEmbeddingProvider(config.embeddings);
  const redisOutages = infra.redisOutages ?? new RedisOutageLog(logger);
  const { keyCache, accountCache, plans, accounts } = accountServices(config, bus);
  const onBackgroundError = (error: unknown) => logger.error({ err: error }, 'background write failed');
  const apiKeys = new ApiKeyService({
    keys: apiKeyRepository, users: userRepository, connections: databaseConnectionRepository, pepper: config.apiKeyPepper, cache: keyCache, plans,
  });
  // Key usage: what the rate-limit status shows of a key's day is cached until more of it is written.
  const keyUsageCache = new KeyUsageCache(bus, 5_000);
  const usage = new UsageRecorder({
    usage: requestUsageRepository, keys: apiKeyRepository, flushMs: config.usageFlushMs, onError: onBackgroundError, isRejected: isRowRejected,
    onCountedWritten: (keyIds) => keyIds.forEach((keyId) => keyUsageCache.changed(keyId)),
  });
  const violations = new ViolationRecorder(violationRepository, onBackgroundError, (keyId) => keyUsageCache.changed(keyId));
  const limits = new LimitsService({ store: rateLimitStore, enabled: config.rateLimitEnabled, upgradeUrl: config.upgradeUrl, violations, now });
  const executorOptions = {
    hostPolicy: { allowlist: config.dbHostAllowlist, allowPrivate: config.dbAllowPrivateHosts, allowLoopback: config.dbAllowPrivateHosts },
    connectTimeoutMs: 3000,
    max: 5,
  };
  const pools = new PoolManager({ ...executorOptions, idleCloseMs: 5 * 60_000, maxPerHost: config.dbMaxConnectionsPerHost, maxTotal: config.dbMaxConnections });
  // Uploaded SQLite files live in the store; each process reads its own copy, checked against the store at most
  // every few seconds and at once when the bus says another process replaced or removed the file.
  const sqliteCopies = new SqliteFileCopies({
    root: config.sqliteDataDir, files: sqliteFileRepository, freshMs: FRESH_MS, log: (level, message, context) => logger[level](context, message), now,
  });
  bus.subscribe('sqlite-file', (key) => {
    const cut = key.indexOf('/');
    if (cut > 0) sqliteCopies.forget(key.slice(0, cut), key.slice(cut + 1));
  });
  const databases = new DatabaseService({
    connections: databaseConnectionRepository,
    plans,
    pools,
    executorOptions,
    credentialsKey: config.credentialsKey,
    sqliteDataDir: config.sqliteDataDir,
    sqliteCopies,
    upgradeUrl: config.upgradeUrl,
    queryTimeoutMs: config.searchTimeoutMs,
    onConnectionChanged: (databaseId) => connectionListeners.forEach((listener) => listener(databaseId)),
    // searchIndex is made below: these run only when a connection is created, changed or removed.
    index: {
      connected: (record) => searchIndex.service.connected(record),
      changed: (before, after, reconnected) => searchIndex.service.changed(before, after, reconnected),
      removing: (record) => searchIndex.service.removing(record),
    },
    onError: (error) => logger.warn({ err: error }, 'search index upkeep failed'),
    onConnectionsOfUserChanged: (userId) => accountCache.databasesChanged(userId),
  });
  /** Caches keyed by connection (search results, schemas) subscribe here to drop entries when it changes. */
  const connectionListeners: Array<(databaseId: string) => void> = [];
  // Each user's own SQLite folder and the uploads that fill it.
  const sqliteFiles = new SqliteFileService({
    root: config.sqliteDataDir,
    plans,
    connections: databaseConnectionRepository,
    pools,
    reservations: sqliteUploadReservationRepository,
    files: sqliteFileRepository,
    copies: sqliteCopies,
    onFileChanged: (userId, name) => bus.publish('sqlite-file', `${userId}/${name}`),
    onConnectionChanged: (databaseId) => connectionListeners.forEach((listener) => listener(databaseId)),
    // searchIndex is made below; a failed upkeep is logged and never fails the upload (the schedule syncs later).
    onSourceReplaced: (record) => searchIndex.service.sourceReplaced(record).catch((error: unknown) => logger.warn({ err: error }, 'search index upkeep failed')),
    log: (level, message, context) => logger[level](context, message),
    now,
  });
  // The search index: every connected table synced into Quarry's own index in the background (when
  // connected, on demand, and on each connection's schedule); natural, semantic and hybrid search read it.
  const searchIndex = wireSearchIndex({
    config, logger, embeddings, databases, planOf: (userId) => plans.planOf(userId),
    onIndexChanged: (databaseId) => connectionListeners.forEach((listener) => listener(databaseId)),
    now,
  });
  // Analytics: searches are recorded in batches; every read flushes them first, so it sees the caller's latest.
  const clock = now ?? Date.now;
  const historyCache = new HistoryCache<History>(bus, 5_000);
  const searchRecorder = new SearchRecorder({
    records: searchRecordRepository, flushMs: config.usageFlushMs, onError: onBackgroundError, isRejected: isRowRejected,
    onRecorded: (userId) => historyCache.forget(userId),
    onWritten: (userIds) => userIds.forEach((userId) => historyCache.changed(userId)),
  });
  // Search: federated full-text search and suggestions; their caches drop a connection's entries when it changes.
  const searchCacheTtl = config.searchCacheTtlMs;
  // What a search reads of the store, remembered so a recently used key keeps searching through a store outage.
  const searchReads = new OutageReads({
    databases, connections: databaseConnectionRepository, indexedTables: (ids) => searchIndex.service.indexedTables(ids),
    bus, graceMs: config.storeOutageGraceMs, isOutage: isStoreUnavailable, now,
    // As stale as this process's view of the index itself may be after another process wrote it.
    freshMs: Math.min(FRESH_MS, config.index.readConsistencyMs),
  });
  // What search knows of each connection (tables, full-text indexes, index state), one copy per process.
  const searchCatalog = new SearchCatalog({
    tablesOf: (record, fresh) => databases.tablesOf(record, fresh),
    executorFor: (record) => databases.executorFor(record),
    indexedTables: (ids) => searchReads.indexedTables(ids),
    now,
  });
  const search = new SearchService({
    databases: { owned: (userId, id) => searchReads.owned(userId, id) },
    catalog: searchCatalog,
    connections: { listOwned: (userId, environment) => searchReads.listOwned(userId, environment) },
    recorder: searchRecorder,
    cache: searchCacheTtl === 0 ? new NoResultCache()
      : config.redisUrl ? new RedisResultCache(config.redisUrl, searchCacheTtl, undefined, { lost: (error) => redisOutages.lost('search cache', error), regained: () => redisOutages.regained('search cache') }, config.redisTimeoutMs)
        : new MemoryResultCache(searchCacheTtl),
    cursorSecret: createHmac('sha256', config.apiKeyPepper).update('quarry search cursor v1').digest(),
    upgradeUrl: config.upgradeUrl,
    timeoutMs: config.searchTimeoutMs,
    onError: (error) => logger.error({ err: error }, 'search failed'),
    // The engines every search asks at once: Quarry's index, and the users' databases searched live.
    engines: {
      index: new IndexEngine(searchIndex.store),
      live: new LiveEngine({ catalog: searchCatalog, onError: (error) => logger.error({ err: error }, 'search failed'), timeoutMs: config.searchTimeoutMs }),
    },
    providerId: embeddings.id,
    // One AI request per semantic or hybrid search, counted before the model runs.
    embedQuery: async (caller, text) => {
      await limits.admitAiRequest(caller);
      try {
        const [vector] = await embeddings.embed([text], 'query');
        return vector!;
      } catch (error) {
        if (!(error instanceof EmbeddingError)) throw error;
        throw new AppError('SERVICE_UNAVAILABLE', `Semantic search is unavailable: ${error.message}`, { providerId: embeddings.id });
      }
    },
  });
  const suggestions = new SuggestionService({
    connections: databaseConnectionRepository,
    catalog: searchCatalog,
    queries: searchSuggestionRepository,
    timeoutMs: config.searchTimeoutMs,
    onError: (error) => logger.warn({ err: error }, 'search vocabulary sampling failed'),
  });
  // Through the bus, so every process (Redis pub/sub) drops its cached records, schemas and vocabularies.
  bus.subscribe('search-connection', (databaseId) => {
    searchCatalog.forget(databaseId);
    search.forget(databaseId);
    suggestions.forget(databaseId);
  });
  connectionListeners.push((databaseId) => bus.publish('search-connection', databaseId));
  const analyticsReads = { stats: searchStatsRepository, flushPending: () => searchRecorder.flush(), now: clock };
  const retention = new RetentionService({
    stores: {
      searchRecords: searchRecordRepository,
      searchRollups: { deleteOlderThan: (cutoff) => searchRecordRepository.deleteRollupsBefore(cutoff) },
      requestUsage: requestUsageRepository,
    },
    retentionDays: config.analyticsRetentionDays,
    onError: (error) => logger.error({ err: error }, 'analytics retention failed'),
    onDeleted: () => historyCache.changed('*'),
    now: clock,
  });
  const health = new HealthService({
    storeKind: config.storeKind,
    pingStore: () => sequelize.query('SELECT 1').then(() => undefined),
    cache: config.redisUrl
      ? { ping: () => rateLimitStore.ping(), lastError: () => rateLimitStore.status().lastError }
      : null,
    index: {
      kind: /^([a-z][a-z0-9+.-]*):\/\//i.exec(config.index.uri)?.[1]?.toLowerCase() ?? 'folder',
      ping: () => searchIndex.store.checkReachable(),
    },
    startedAt: Date.now(),
  });
  return {
    clock,
    accounts,
    plans,
    apiKeys,
    databases,
    sqliteFiles,
    pools,
    connectionListeners,
    embeddings,
    searchIndex,
    keyUsage: new KeyUsageService({ keys: apiKeys, logs: requestUsageRepository, limits, flushPending: () => usage.flush() }),
    usage,
    violations,
    limits,
    health,
    migrations: new MigrationService(migrator),
    searchRecorder,
    search,
    suggestions,
    retention,
    analytics: new AnalyticsService({ ...analyticsReads, connections: databaseConnectionRepository, plans }),
    adminAnalytics: new AdminAnalyticsService({ ...analyticsReads, users: userRepository, roleOf: (user) => accounts.roleOf(user) }),
    analyticsExport: new AnalyticsExporter({ ...analyticsReads, records: searchRecordRepository, plans, upgradeUrl: config.upgradeUrl }),
    searchHistory: new SearchHistoryService({ ...analyticsReads, records: searchRecordRepository, cache: historyCache }),
    rateLimit: new RateLimitService({
      limits, logs: requestUsageRepository, violations: violationRepository, flushPending: () => usage.flush(),
      hasUnwritten: (keyId) => usage.hasUnwritten(keyId), cache: keyUsageCache, now,
    }),
  };
}

export type Services = ReturnType<typeof createServices>;

/**
 * The index's store, job runner, Indexing service and schedule; `start` once the server is up, `stop` before the
 * store closes.
 */
function wireSearchIndex(deps: {
  config: Config;
  logger: Logger;
  embeddings: EmbeddingProvider;
  databases: DatabaseService;
  planOf(userId: string): Promise<TierName>;
  onIndexChanged(databaseId: string): void;
  now?: () => number;
}) {
  const { config, logger, embeddings, databases, onIndexChanged, now } = deps;
  const store = new IndexStore({
    uri: config.index.uri, readConsistencySeconds: config.index.readConsistencyMs / 1000, vocabularyMaxTerms: config.index.vocabularyTerms,
    cacheBytes: { index: config.index.cacheMb * 1024 * 1024, metadata: config.index.metadataCacheMb * 1024 * 1024 },
    rowCacheBytes: config.index.rowCacheMb * 1024 * 1024,
    storageOptions: config.index.storageOptions,
    keepVersionsMs: config.index.keepVersionsMs,
  });
  const runner = new IndexJobRunner({
    jobs: indexJobRepository,
    tables: indexTableRepository,
    store,
    provider: embeddings,
    findConnection: (id) => databaseConnectionRepository.findById(id),
    // A sync reads the version of a SQLite file the store holds now, not the one this process saw a moment ago.
    executorFor: (record) => databases.executorFor(record, { latestFile: true }),
    tablesOf: (record) => databases.tablesOf(record),
    logger,
    onSynced: (connectionId) => onIndexChanged(connectionId),
    maxActive: config.index.maxJobs,
    maxAttempts: config.index.maxAttempts,
    staleMs: config.index.staleMs,
    keepVersionsMs: config.index.keepVersionsMs,
    sync: { queryTimeoutMs: Math.max(config.searchTimeoutMs, 30_000) },
    now,
  });
  const syncing = config.index.sync;
  const service = new IndexService({
    owned: (userId, databaseId) => databases.owned(userId, databaseId),
    tablesOf: (record, fresh) => databases.tablesOf(record, fresh),
    rowLimit: async (userId) => INDEX_ROWS_PER_TABLE[await deps.planOf(userId)],
    connections: databaseConnectionRepository,
    tables: indexTableRepository,
    jobs: indexJobRepository,
    store,
    // A process that does not sync leaves queued jobs to those that do.
    runner: syncing ? runner : { pump: async () => undefined, abort: () => undefined, abortConnection: async () => undefined },
    providerId: embeddings.id,
    onIndexChanged,
    onError: (error) => logger.warn({ err: error }, 'scheduled index sync could not be queued'),
    streams: {
      // A binary log reader keeps nothing on the server: no slot to measure or drop, only the reader to end.
      lagBytes: async (record) => (record.engine === 'postgres' ? slotLagBytes(await databases.executorFor(record), streamName(record.id)) : null),
      drop: async (record) => {
        await streamer.end(record.id);
        if (record.engine !== 'postgres') return [];
        const problems = await dropStream(await databases.replicationConfigFor(record), streamName(record.id));
        for (const problem of problems) logger.warn({ connectionId: record.id }, problem);
        return problems;
      },
    },
    now,
  });
  // What following a table's changes needs, by poll or by stream: the same sources, index and reconcile.
  const following = {
    tables: indexTableRepository,
    store,
    provider: embeddings,
    findConnection: (id: string) => databaseConnectionRepository.findById(id),
    tablesOf: (record: DatabaseConnectionRecord, fresh?: boolean) => databases.tablesOf(record, fresh),
    executorFor: (record: DatabaseConnectionRecord) => databases.executorFor(record),
    reconcile: (record: DatabaseConnectionRecord, tableName: string) => service.reconcile(record, tableName),
    onApplied: (connectionId: string) => onIndexChanged(connectionId),
    logger,
    staleMs: config.index.staleMs,
    queryTimeoutMs: Math.max(config.searchTimeoutMs, 30_000),
    now,
  };
  const streamer: ChangeStreamer = new ChangeStreamer({
    ...following,
    replicationConfigFor: (record) => databases.replicationConfigFor(record),
  });
  const poller = new ChangePoller({
    ...following,
    jobs: indexJobRepository,
    runsSpace: (space) => runner.runsSpace(space),
    rowLimit: async (userId) => INDEX_ROWS_PER_TABLE[await deps.planOf(userId)],
  });
  const schedule = new IndexSchedule({ runner, poller, streamer, service, store, jobs: indexJobRepository, syncing, logger, cleanupEveryMs: config.index.keepVersionsMs });
  return { store, runner, poller, streamer, service, schedule, start: () => schedule.start(), stop: () => schedule.stop() };
}
