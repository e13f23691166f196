import { Umzug, SequelizeStorage } from 'umzug';
import type { QueryInterface, Sequelize } from 'sequelize';
import { migrations } from './migrations/index.js';

export type Migrator = Umzug<QueryInterface>;

/** The one migration runner. Migrations are listed in code, so the same list runs from TypeScript and from dist/. */
export function createMigrator(sequelize: Sequelize): Migrator {
  return new Umzug({
    migrations: migrations.map((migration) => ({
      name: migration.name,
      up: ({ context }) => migration.up(context),
      down: ({ context }) => migration.down(context),
    })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'quarry_migrations' }),
    logger: undefined,
  });
}
