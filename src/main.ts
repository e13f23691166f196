import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { startServer } from './server.js';
import { startWorkers } from './workers.js';

/**
 * On the first SIGINT or SIGTERM: says so, runs `stop` and exits with the code it gives (1 if it fails). Past
 * `deadlineMs` the process exits 1 all the same, after `late`.
 */
function stopOnSignal(logger: Logger, doing: string, deadlineMs: number, late: () => void, stop: () => Promise<number>): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `shutting down: ${doing}`);
    setTimeout(() => {
      late();
      process.exit(1);
    }, deadlineMs);
    stop().then(
      (code) => process.exit(code),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/** WORKERS > 1: start the workers (workers.ts), and stop them all on SIGINT/SIGTERM. */
async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const pool = await startWorkers(config, logger);
  // A worker exits by its own SHUTDOWN_TIMEOUT_MS; the deadline only ends a primary whose workers did not.
  stopOnSignal(logger, 'stopping the workers', config.shutdownTimeoutMs + 2000, () => {
    logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'workers took longer than SHUTDOWN_TIMEOUT_MS to stop: exiting now');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
  }, () => pool.stop());
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
  // Whatever a connected database or the store does, a stop ends: the supervisor gets its process back.
  stopOnSignal(logger, 'finishing in-flight requests', config.shutdownTimeoutMs, () => {
    logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown took longer than SHUTDOWN_TIMEOUT_MS: exiting now');
  }, async () => {
    await server.stop();
    return 0;
  });
}

main().catch((error) => {
  console.error(`Quarry failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
