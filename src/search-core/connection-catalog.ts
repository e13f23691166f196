/**
 * The tables of each connected database, as search and indexing both read them: the stored schema, or a new discovery
 * when none is stored or the reader asks for one (a sync that must see new and dropped tables). One object per
 * process, made by the composition root; what others derive from a connection's tables (the live search's full-text
 * indexes, services/search/search-catalog.ts) is dropped whenever anyone discovers them afresh, so search and
 * indexing never work from two versions of one database.
 */
import type { TableSchema } from '../connectors/index.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';

export interface ConnectionCatalogDeps {
  /** The stored schema, or a new discovery when none is stored or `fresh` asks (ConnectionSources.tablesOf). */
  tablesOf(record: DatabaseConnectionRecord, fresh: boolean): Promise<TableSchema[]>;
}

export class ConnectionCatalog {
  private readonly rediscovered: Array<(databaseId: string) => void> = [];

  constructor(private readonly deps: ConnectionCatalogDeps) {}

  /** The connection's tables; `fresh` discovers them again, and whatever was derived from the old ones is dropped. */
  tables(record: DatabaseConnectionRecord, fresh = false): Promise<TableSchema[]> {
    if (fresh) for (const listener of this.rediscovered) listener(record.id);
    return this.deps.tablesOf(record, fresh);
  }

  /** `listener` hears of every fresh discovery, by whomever: what it derived from the connection's tables is stale. */
  onRediscovered(listener: (databaseId: string) => void): void {
    this.rediscovered.push(listener);
  }
}
