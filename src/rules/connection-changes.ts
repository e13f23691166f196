import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';

/**
 * Whether a change of a connection syncs every table of it again: indexing turned on, or another environment or
 * database (another space, or other rows). The index's upkeep queues those syncs; the schedule starts again from them.
 */
export function syncsEveryTable(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): boolean {
  return after.indexEnabled && (movedRows(before, after, reconnected) || !before.indexEnabled);
}

/** The connection now names another environment or database: its old rows leave the index. */
export function movedRows(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): boolean {
  return before.environment !== after.environment || reconnected;
}
