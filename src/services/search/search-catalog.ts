/**
 * What search knows of each connected database, in one place: its tables (the connection catalog, search-core/
 * connection-catalog.ts, which indexing reads too), its full-text indexes as the live search queries them (discovered
 * from the database on first live use), and which of its tables Quarry's index answers (the store's index state,
 * remembered through a store outage: outage-reads.ts). Planning reads the tables and the index state, the live search
 * and suggestions the full-text indexes. A fresh discovery of the tables, by search or by indexing, drops the full-text
 * indexes with them, so the two never disagree. A connection that changes (or is synced, or goes) is dropped from
 * every process at once through the domain events (composition.ts: 'connection.changed', 'index.synced'); its next
 * search reads it again.
 */
import type { SqlExecutor, TableSchema } from '../../connectors/index.js';
import type { ConnectionCatalog } from '../../search-core/connection-catalog.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import { withTimeout } from '../../lib/timeout.js';
import { loadSearchSchema, SCHEMA_TTL_MS, type SearchSchema } from '../../sql-search/schema-catalog.js';

/** The index's view of some connections: their indexed tables and the syncs running on them. */
export interface IndexState {
  tables: IndexTableRecord[];
  liveJobs: IndexJobRecord[];
}

export interface CatalogDeps {
  /** The connections' tables, as indexing reads them too. */
  connections: Pick<ConnectionCatalog, 'tables' | 'onRediscovered'>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  /** The index's tables and running syncs of these connections, read from the store (through a store outage too). */
  indexedTables(connectionIds: string[]): Promise<IndexState>;
  now?: () => number;
  /** How a connection's full-text indexes are discovered (its own database read; a test counts them instead). */
  loadFullText?: typeof loadSearchSchema;
}

/** The search's deadline passed before the catalog could read a database. */
export class DeadlineError extends Error {}

/** Settles like `promise` unless the search's deadline passes first (then a DeadlineError), through the one timeout helper. */
export function beforeDeadline<T>(promise: Promise<T>, deadline: number, now: () => number): Promise<T> {
  return withTimeout(promise, deadline - now(), { error: () => new DeadlineError() });
}

export class SearchCatalog {
  /**
   * Full-text indexes per connection, keyed by the connection's version. A full-text index the user adds in their
   * own database (no event reaches Quarry) is seen within SCHEMA_TTL_MS.
   */
  private readonly fullText = new TtlCache<SearchSchema>(SCHEMA_TTL_MS);
  private readonly now: () => number;
  private readonly loadFullText: typeof loadSearchSchema;

  constructor(private readonly deps: CatalogDeps) {
    this.now = deps.now ?? Date.now;
    this.loadFullText = deps.loadFullText ?? loadSearchSchema;
    // Tables discovered afresh (here or by indexing) may have new full-text indexes too.
    deps.connections.onRediscovered((databaseId) => this.fullText.forget(databaseId));
  }

  /** The connection's tables; `fresh` discovers them again, and its full-text indexes with them. */
  tables(record: DatabaseConnectionRecord, fresh = false): Promise<TableSchema[]> {
    return this.deps.connections.tables(record, fresh);
  }

  /** Which tables of these connections the index holds, and which are being synced. */
  indexState(connectionIds: string[]): Promise<IndexState> {
    return this.deps.indexedTables(connectionIds);
  }

  /** The connection's pooled executor and its full-text indexes as live search reads them, within the deadline. */
  async liveSchema(record: DatabaseConnectionRecord, deadline: number): Promise<{ executor: SqlExecutor; schema: SearchSchema }> {
    const executor = await beforeDeadline(this.deps.executorFor(record), deadline, this.now);
    const schema = await beforeDeadline(
      this.fullText.get(record.id, `${record.updatedAt.getTime()}`, () => this.loadFullText(executor, record.tables, Math.max(1, deadline - this.now()))),
      deadline,
      this.now,
    );
    return { executor, schema };
  }

  /** A connection changed, was synced or went: what is known of it is stale. */
  forget(databaseId: string): void {
    this.fullText.forget(databaseId);
  }
}
