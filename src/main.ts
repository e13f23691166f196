import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { startServer } from './server.js';
import { startWorkers } from './workers.js';

/** WORKERS > 1: start the workers (workers.ts), and stop them all on SIGINT/SIGTERM. */
async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const pool = await startWorkers(config, logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: stopping the workers');
    // A worker exits by its own SHUTDOWN_TIMEOUT_MS; this only ends a primary whose workers did not.
    setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'workers took longer than SHUTDOWN_TIMEOUT_MS to stop: exiting now');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.shutdownTimeoutMs + 2000).unref();
    void pool.stop().then((code) => process.exit(code));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  await pool.started;
  logger.info({ workers: config.workers, port: config.port }, `Quarry started ${config.workers} worker processes`);
}

/** `npm start`: validate the configuration, start, and stop gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, logger);
  const server = await startServer(config, logger);
  logger.info({ url: server.url, store: config.storeKind, redis: config.redisUrl ? 'on' : 'off' }, `Quarry listening on ${server.url}`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Whatever a connected database or the store does, a stop ends: the supervisor gets its process back.
    setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown took longer than SHUTDOWN_TIMEOUT_MS: exiting now');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    server.stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error) => {
  console.error(`Quarry failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
