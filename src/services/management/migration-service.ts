import type { components } from '../../../generated/openapi.js';
import type { Migrator } from '../../store/migrator.js';

type MigrationStatus = components['schemas']['MigrationStatusResponse']['data'];

/** getMigrationStatus: what umzug has recorded as executed, and what is still pending. */
export class MigrationService {
  constructor(private readonly migrator: Migrator) {}

  async status(): Promise<MigrationStatus> {
    const [executed, pending] = await Promise.all([this.migrator.executed(), this.migrator.pending()]);
    return {
      upToDate: pending.length === 0,
      executed: executed.map((migration) => ({ name: migration.name })),
      pending: pending.map((migration) => migration.name),
      current: executed.at(-1)?.name ?? null,
    };
  }
}
