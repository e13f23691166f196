import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type QuarryApp } from './app.js';
import { closeWithin } from './connectors/deadline.js';
import type { Config } from './config/config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { releaseModels, setupModels } from './models/index.js';
import { createRateLimitStore } from './rate-limit/index.js';
import { MemoryBus, RedisBus } from './lib/invalidation-bus.js';
import { RedisOutageLog } from './lib/redis-outage.js';
import { verifyCredentialsKey } from './crypto/credentials-check.js';
import { createServices, type Services } from './composition.js';
import { withTimeout } from './lib/timeout.js';
import { checkConditionalWrites } from './search-index/conditional-writes.js';
import { settingRepository } from './repositories/setting-repository.js';
import { createMigrator } from './store/migrator.js';
import { createSequelize } from './store/sequelize.js';

/** How long a stop waits for running semantic index jobs to put themselves back in the queue. */
const SEMANTIC_STOP_MS = 3000;

export interface RunningServer {
  url: string;
  app: QuarryApp;
  services: Services;
  logger: Logger;
  stop(): Promise<void>;
}

/**
 * Builds everything from a validated config, applies pending migrations, and listens. `stop` finishes in-flight
 * requests, flushes batched writes and closes the store and Redis, in that order.
 */
export interface ServerOptions {
  /** Time source for rate limits (tests). */
  now?: () => number;
}

/** Longest the start waits for the index's object store to answer (LanceDB retries a refused connection a few times). */
const INDEX_STORAGE_CHECK_MS = 30_000;

/**
 * An object store index that cannot be reached stops the start with what the store said (a folder is made on first
 * use): several processes would otherwise start and fail every indexed search. No credential is in the message.
 */
async function checkIndexStorage(config: Config, services: Services, logger: Logger): Promise<void> {
  const { uri, storageOptions } = config.index;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(uri) || /^file:/i.test(uri)) return;
  const store = `the search index's object store (INDEX_URI ${uri})`;
  try {
    await withTimeout(services.searchIndex.store.checkReachable(), INDEX_STORAGE_CHECK_MS, {
      error: () => new Error(`no answer within ${INDEX_STORAGE_CHECK_MS / 1000} s`),
    });
  } catch (error) {
    throw new Error(`${store} cannot be reached: ${(error as Error).message}. Check INDEX_URI and the INDEX_S3_*, INDEX_GCS_* or INDEX_AZURE_* settings.`);
  }
  if (!/^s3:/i.test(uri)) return;
  // Every process may write the index (a sync, a connection's removal): a store that ignores conditional writes
  // loses one writer's commits without an error, so it is refused here rather than trusted.
  let check;
  try {
    check = await checkConditionalWrites({ uri, storageOptions });
  } catch (error) {
    throw new Error(`${store} could not be checked for conditional writes: ${(error as Error).message}`);
  }
  if (check.outcome === 'ignored') {
    throw new Error(`${store} ignores conditional writes (If-None-Match on PUT): it took a second write of an object it already had. Several writers would lose each other's index commits without an error. Use a store that honours them (README: "Where the index can live").`);
  }
  if (check.outcome === 'unchecked') logger.warn({ reason: check.reason }, 'the index store was not checked for conditional writes; make sure it honours If-None-Match on PUT');
}

export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel), options: ServerOptions = {}): Promise<RunningServer> {
  const sequelize = createSequelize(config);
  setupModels(sequelize);
  const migrator = createMigrator(sequelize);
  await migrator.up();
  // Each Redis user reports here; an outage is logged once when it starts and once when it ends.
  const redisOutages = new RedisOutageLog(logger);
  const rateLimitStore = createRateLimitStore({
    redisUrl: config.redisUrl ?? undefined,
    timeoutMs: config.redisTimeoutMs,
    onError: (error) => redisOutages.lost('rate limits', error),
    onRecover: () => redisOutages.regained('rate limits'),
  });
  await verifyCredentialsKey(settingRepository, config.credentialsKey);
  const bus = config.redisUrl
    ? new RedisBus(config.redisUrl, { lost: (error) => redisOutages.lost('invalidations', error), regained: () => redisOutages.regained('invalidations') })
    : new MemoryBus();
  const services = createServices({ config, logger, sequelize, migrator, rateLimitStore, bus, redisOutages, now: options.now });
  await checkIndexStorage(config, services, logger);
  await services.sqliteFiles.adoptSharedFiles();
  services.usage.start();
  services.searchRecorder.start();
  services.retention.start();
  services.searchIndex.start();
  const app = await createApp(config, logger, services);
  const server: Server = createServer(app.koa.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    app,
    services,
    logger,
    async stop() {
      // Every response from now on closes its connection; in-flight requests finish (each is bounded by its
      // database's deadlines), and a response still being written at half the stop's budget (a slow client's
      // export) is cut, so the rest of the stop has time to write what was recorded.
      app.drain();
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs / 2);
        cut.unref();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      await services.usage.stop();
      await services.searchRecorder.stop();
      await services.search.close();
      await services.retention.stop();
      // Before the pools and the store: running sync jobs are queued again. A job whose database stopped answering
      // is not waited for past SEMANTIC_STOP_MS (its heartbeat lapses, and the next process claims it).
      await closeWithin(services.searchIndex.stop(), SEMANTIC_STOP_MS, () => logger.warn('index sync jobs did not stop in time; the next start takes them over'));
      await services.embeddings.close();
      await services.pools.closeAll(); // each pool within CLOSE_GRACE_MS, whatever its server does
      await services.violations.drain();
      await rateLimitStore.close();
      await bus.close();
      await sequelize.close();
      releaseModels(sequelize);
    },
  };
}
