import type { Config } from './config/config.js';
import { createOperatorServices, type OperatorServices } from './composition.js';
import type { Logger } from './lib/logger.js';
import { MemoryBus, RedisBus } from './lib/invalidation-bus.js';
import { RedisOutageLog } from './lib/redis-outage.js';
import { releaseModels, setupModels } from './models/index.js';
import { createMigrator } from './store/migrator.js';
import { createSequelize } from './store/sequelize.js';

/** The store's schema is not the one this code expects; the command changed nothing. */
export class StoreNotReadyError extends Error {
  constructor(pending: string[], empty: boolean) {
    super(`${empty ? 'The store has no Quarry schema yet' : `The store lacks ${pending.length} migration(s) of this version (${pending.join(', ')})`}: `
      + 'start the server of this version once (it applies them), then run the command again. Nothing was changed.');
    this.name = 'StoreNotReadyError';
  }
}

/**
 * An operator's command on accounts (`npm run user`): opens the store the servers use, checks that its schema is
 * this version's (a command never migrates a store that running servers own), runs `work` with the account
 * services, tells running servers of the change (through Redis when REDIS_URL is set, before closing), and closes.
 * No HTTP server, no background work, nothing left running.
 */
export async function runOperatorCommand<T>(config: Config, logger: Logger, work: (services: OperatorServices) => Promise<T>): Promise<T> {
  const sequelize = createSequelize(config);
  setupModels(sequelize);
  let bus: RedisBus | MemoryBus | undefined;
  try {
    const migrator = createMigrator(sequelize);
    const pending = await migrator.pending();
    if (pending.length > 0) throw new StoreNotReadyError(pending.map((migration) => migration.name), (await migrator.executed()).length === 0);
    const outages = new RedisOutageLog(logger);
    bus = config.redisUrl
      ? new RedisBus(config.redisUrl, { lost: (error) => outages.lost('invalidations', error), regained: () => outages.regained('invalidations') }, { queueUntilConnected: true })
      : new MemoryBus();
    const result = await work(createOperatorServices({ config, bus }));
    await bus.flush();
    return result;
  } finally {
    await bus?.close();
    await sequelize.close();
    releaseModels(sequelize);
  }
}
