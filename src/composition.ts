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
import type { RateLimitStore } from './rate-limit/index.js';
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
import { DomainEvents, type EventPublisher } from './lib/domain-events.js';
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
import { ConnectionSources } from './services/databases/connection-sources.js';
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
import { ConnectionCatalog } from './search-core/connection-catalog.js';
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
import { createEmbeddingProvider, QueryEmbedder, type EmbeddingProvider } from './embeddings/index.js';
import { indexJobRepository } from './repositories/index-job-repository.js';
import { indexTableRepository } from './repositories/index-table-repository.js';
import { IndexStore, storageKind } from './search-index/index-store.js';
import { IndexJobRunner } from './search-index/job-runner.js';
import { ChangePoller } from './search-index/changes/poller.js';
import { StreamSlots } from './search-index/changes/stream-slots.js';
import { ChangeStreamer } from './search-index/changes/streamer.js';
import { IndexSchedule } from './search-index/schedule.js';
import { NO_PUMP, SyncQueue } from './search-index/sync-queue.js';
import { IndexUpkeep } from './search-index/upkeep.js';
import { IndexService } from './services/indexing/index-service.js';
import type { KeyCaller } from './services/callers.js';

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
  const accounts = new AccountsService({
    users: userRepository,
    sessions: sessionRepository,
    tokens,
    sessionMaxAgeSeconds: config.jwt.sessionMaxAge,
    cache: accountCache,
    connectedDatabaseIds: (userId) => databaseConnectionRepository.listIdsForUser(userId),
  });
  // Account plans: what an account may use, never the best tier among its own keys.
  const plans = new PlanService({
    users: userRepository, upgradeUrl: config.upgradeUrl, view: (user) => accounts.toUser(user), onUserChanged: (userId) => keyCache.userChanged(userId),
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
  // What happened in the domain, told to every process: publishers and subscribers meet here, never each other.
  const events = new DomainEvents(bus);
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
  events.subscribe('file.replaced', ({ userId, name }) => sqliteCopies.forget(userId, name));
  // Reading the saved connections' databases: what search, sync jobs and the index's upkeep share.
  const sources = new ConnectionSources({
    connections: databaseConnectionRepository, pools, credentialsKey: config.credentialsKey, sqliteDataDir: config.sqliteDataDir, sqliteCopies,
    queryTimeoutMs: config.searchTimeoutMs,
  });
  // The connections' tables, one view per process that search and indexing both read.
  const catalog = new ConnectionCatalog({ tablesOf: (record, fresh) => sources.tablesOf(record, fresh) });
  // The search index: every connected table synced into Quarry's own index in the background (when
  // connected, on demand, and on each connection's schedule); natural, semantic and hybrid search read it.
  const searchIndex = wireSearchIndex({ config, logger, embeddings, sources, catalog, events, rowLimit: (userId) => plans.indexRowLimit(userId), now });
  const databases = new DatabaseService({
    connections: databaseConnectionRepository,
    catalog,
    plans,
    pools,
    sources,
    executorOptions,
    credentialsKey: config.credentialsKey,
    upgradeUrl: config.upgradeUrl,
    queryTimeoutMs: config.searchTimeoutMs,
    events,
    lifecycle: searchIndex.upkeep,
    onError: (error) => logger.warn({ err: error }, 'search index upkeep failed'),
    onConnectionsOfUserChanged: (userId) => accountCache.databasesChanged(userId),
  });
  // Each user's own SQLite folder and the uploads that fill it.
  const sqliteFiles = new SqliteFileService({
    root: config.sqliteDataDir,
    plans,
    connections: databaseConnectionRepository,
    pools,
    reservations: sqliteUploadReservationRepository,
    files: sqliteFileRepository,
    copies: sqliteCopies,
    events,
    lifecycle: searchIndex.upkeep,
    log: (level, message, context) => logger[level](context, message),
    now,
  });
  // The Indexing tag's operations over the index that wireSearchIndex made.
  const indexing = new IndexService({
    owned: (userId, databaseId) => databases.owned(userId, databaseId),
    catalog,
    rowLimit: (userId) => plans.indexRowLimit(userId),
    tables: indexTableRepository,
    jobs: indexJobRepository,
    store: searchIndex.store,
    runner: searchIndex.pump,
    queue: searchIndex.queue,
    providerId: embeddings.id,
    streams: searchIndex.slots,
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
    databases, connections: databaseConnectionRepository, indexedTables: (ids) => indexing.indexedTables(ids),
    bus, graceMs: config.storeOutageGraceMs, isOutage: isStoreUnavailable, now,
    // As stale as this process's view of the index itself may be after another process wrote it.
    freshMs: Math.min(FRESH_MS, config.index.readConsistencyMs),
  });
  // What search knows of each connection (tables, full-text indexes, index state), one copy per process.
  const searchCatalog = new SearchCatalog({
    connections: catalog,
    executorFor: (record) => databases.executorFor(record),
    indexedTables: (ids) => searchReads.indexedTables(ids),
    now,
  });
  // One AI request per semantic or hybrid search, counted before the model runs.
  const queryEmbedder = new QueryEmbedder({ provider: embeddings, admit: (caller: KeyCaller) => limits.admitAiRequest(caller) });
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
    embedQuery: (caller, text) => queryEmbedder.embed(caller, text),
  });
  const suggestions = new SuggestionService({
    connections: databaseConnectionRepository,
    catalog: searchCatalog,
    queries: searchSuggestionRepository,
    timeoutMs: config.searchTimeoutMs,
    onError: (error) => logger.warn({ err: error }, 'search vocabulary sampling failed'),
  });
  // Every process (Redis pub/sub) drops its cached pages, schemas and vocabularies of a changed connection or index.
  for (const event of ['connection.changed', 'index.synced'] as const) {
    events.subscribe(event, ({ databaseId }) => {
      searchCatalog.forget(databaseId);
      search.forget(databaseId);
      suggestions.forget(databaseId);
    });
  }
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
      kind: storageKind(config.index.uri),
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
    embeddings,
    searchIndex: { ...searchIndex, service: indexing },
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
 * The search index's engine and upkeep: its store, the sync jobs' runner and queue, the readers of changes between
 * syncs, the upkeep the connections' lifecycle calls, and the schedule; `start` once the server is up, `stop` before
 * the store closes. The Indexing tag's service reads it (createServices).
 */
function wireSearchIndex(deps: {
  config: Config;
  logger: Logger;
  embeddings: EmbeddingProvider;
  sources: ConnectionSources;
  catalog: ConnectionCatalog;
  events: EventPublisher;
  rowLimit(userId: string): Promise<number>;
  now?: () => number;
}) {
  const { config, logger, embeddings, sources, catalog, events, rowLimit, now } = deps;
  const indexSynced = (databaseId: string) => events.publish('index.synced', { databaseId });
  const store = new IndexStore({
    uri: config.index.uri, readConsistencySeconds: config.index.readConsistencyMs / 1000, vocabularyMaxTerms: config.index.vocabularyTerms,
    cacheBytes: { index: config.index.cacheMb * 1024 * 1024, metadata: config.index.metadataCacheMb * 1024 * 1024 },
    rowCacheBytes: config.index.rowCacheMb * 1024 * 1024,
    storageOptions: config.index.storageOptions,
    keepVersionsMs: config.index.keepVersionsMs,
    logger,
  });
  const runner = new IndexJobRunner({
    jobs: indexJobRepository,
    tables: indexTableRepository,
    store,
    provider: embeddings,
    findConnection: (id) => databaseConnectionRepository.findById(id),
    // A sync reads the version of a SQLite file the store holds now, not the one this process saw a moment ago.
    executorFor: (record) => sources.executorFor(record, { latestFile: true }),
    catalog,
    logger,
    onSynced: indexSynced,
    maxActive: config.index.maxJobs,
    maxAttempts: config.index.maxAttempts,
    staleMs: config.index.staleMs,
    keepVersionsMs: config.index.keepVersionsMs,
    sync: { queryTimeoutMs: Math.max(config.searchTimeoutMs, 30_000) },
    now,
  });
  const syncing = config.index.sync;
  const pump = syncing ? runner : NO_PUMP;
  const queue = new SyncQueue({
    tables: indexTableRepository, jobs: indexJobRepository, store, runner: pump, rowLimit, catalog,
    providerId: embeddings.id, events, now,
  });
  // What following a table's changes needs, by poll or by stream: the same sources, index and reconcile.
  const following = {
    tables: indexTableRepository,
    store,
    provider: embeddings,
    findConnection: (id: string) => databaseConnectionRepository.findById(id),
    catalog,
    executorFor: (record: DatabaseConnectionRecord) => sources.executorFor(record),
    reconcile: (record: DatabaseConnectionRecord, tableName: string) => queue.reconcile(record, tableName),
    onApplied: indexSynced,
    logger,
    staleMs: config.index.staleMs,
    queryTimeoutMs: Math.max(config.searchTimeoutMs, 30_000),
    now,
  };
  const streamer = new ChangeStreamer({ ...following, replicationConfigFor: (record) => sources.replicationConfigFor(record) });
  const poller = new ChangePoller({ ...following, jobs: indexJobRepository, runsSpace: (space) => runner.runsSpace(space), rowLimit });
  const slots = new StreamSlots({
    streamer, executorFor: (record) => sources.executorFor(record), replicationConfigFor: (record) => sources.replicationConfigFor(record), logger,
  });
  const upkeep = new IndexUpkeep({
    queue, catalog, tables: indexTableRepository, jobs: indexJobRepository, runner: pump, streams: slots,
    onError: (error) => logger.warn({ err: error }, 'search index upkeep failed'), now,
  });
  const schedule = new IndexSchedule({
    runner, poller, streamer, store, jobs: indexJobRepository, syncing, logger, cleanupEveryMs: config.index.keepVersionsMs,
    connections: databaseConnectionRepository, catalog, queue,
    onError: (error) => logger.warn({ err: error }, 'scheduled index sync could not be queued'), now,
  });
  return { store, runner, pump, queue, poller, streamer, slots, upkeep, schedule, start: () => schedule.start(), stop: () => schedule.stop() };
}
