/**
 * WORKERS > 1: this process is the primary of Node's cluster. It applies the store's migrations once, then starts
 * that many server processes on the same port (each the whole server, as one machine of several behind a load
 * balancer: Redis and the PostgreSQL store are what they share), replaces one that dies, and stops them all on
 * SIGINT/SIGTERM. It serves no request itself.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config/config.js';
import type { Logger } from './lib/logger.js';
import { createMigrator } from './store/migrator.js';
import { createSequelize } from './store/sequelize.js';

/** A worker that died is replaced after this; each death within RESTART_WINDOW_MS of the last doubles it. */
const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
const RESTART_WINDOW_MS = 60_000;

/** Migrations run here, before any worker starts: workers started together would otherwise race to apply them. */
async function migrateStore(config: Config): Promise<void> {
  const sequelize = createSequelize(config);
  try {
    await createMigrator(sequelize).up();
  } finally {
    await sequelize.close();
  }
}

export interface WorkerPool {
  /** Resolves once every worker listens; rejects if one exits before the first of them all do (the rest are stopped). */
  started: Promise<void>;
  /** SIGTERM to every worker; resolves with the exit code the primary should end with (0 if all stopped cleanly). */
  stop(): Promise<number>;
}

export async function startWorkers(config: Config, logger: Logger): Promise<WorkerPool> {
  await migrateStore(config);
  const workers = new Set<Worker>();
  let stopping = false;
  let failedExit = false;
  let delay = RESTART_DELAY_MS;
  let lastDeath = 0;
  let listeningCount = 0;
  let allExited: () => void = () => {};
  let allListening: () => void = () => {};
  let startFailed: (error: Error) => void = () => {};
  const isStarting = () => listeningCount < config.workers;

  const fork = () => {
    const worker = cluster.fork();
    workers.add(worker);
    worker.once('listening', () => {
      if (++listeningCount === config.workers) allListening();
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) {
        // A worker still starting when told to stop has nothing in flight: ending by the signal itself is clean.
        if (code !== 0 && signal !== 'SIGTERM') failedExit = true;
        if (workers.size === 0) allExited();
        return;
      }
      if (isStarting()) {
        // It printed why; a start that fails (port taken, store unreachable) would fail again in every worker.
        startFailed(new Error(`a worker stopped while the server started (exit ${signal ?? code})`));
        return;
      }
      const now = Date.now();
      delay = now - lastDeath < RESTART_WINDOW_MS ? Math.min(delay * 2, MAX_RESTART_DELAY_MS) : RESTART_DELAY_MS;
      lastDeath = now;
      logger.error({ pid: worker.process.pid, code, signal, restartInMs: delay }, 'a worker stopped: starting another');
      // Not unref'd: with every worker dead, this timer is what keeps the primary alive to start them again.
      setTimeout(() => {
        if (!stopping) fork();
      }, delay);
    });
  };

  let stopped: Promise<number> | null = null;
  // Once: a signal during a failed start waits for the same workers' exits.
  const stop = (): Promise<number> => (stopped ??= (async () => {
    stopping = true;
    const exited = new Promise<void>((resolve) => {
      allExited = resolve;
    });
    if (workers.size === 0) allExited();
    // Each worker finishes its in-flight requests and flushes what it recorded (main.ts), within SHUTDOWN_TIMEOUT_MS.
    for (const worker of workers) worker.process.kill('SIGTERM');
    await exited;
    return failedExit ? 1 : 0;
  })());

  const started = new Promise<void>((resolve, reject) => {
    allListening = resolve;
    startFailed = (error) => void stop().then(() => reject(error));
  });
  for (let i = 0; i < config.workers; i += 1) fork();
  return { started, stop };
}
