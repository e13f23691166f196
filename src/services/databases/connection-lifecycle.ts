import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';

/**
 * What must happen elsewhere before a connection's operation answers (the search index's upkeep: a new connection's
 * first sync queued, a removed one's rows and replication slot gone). The composition root passes it; the databases'
 * services wait for it, log its failures and never fail for them. What may follow later, in any process (caches
 * dropping a changed connection's pages and schemas), is a domain event instead.
 */
export interface ConnectionLifecycle {
  connected(record: DatabaseConnectionRecord): Promise<void>;
  changed(before: DatabaseConnectionRecord, after: DatabaseConnectionRecord, reconnected: boolean): Promise<void>;
  removing(record: DatabaseConnectionRecord): Promise<void>;
  /** The data behind the connection was replaced as a whole (an uploaded SQLite file). */
  sourceReplaced(record: DatabaseConnectionRecord): Promise<void>;
}
