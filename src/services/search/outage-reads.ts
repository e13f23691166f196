/**
 * What a search reads from Quarry's own store (the caller's connections and the index's catalog of them), remembered
 * for STORE_OUTAGE_GRACE_MS so that while the store is down a key that searched recently keeps searching its
 * databases as they were then. A change to a connection (edited, removed, its index synced) or to
 * a user's list of connections drops what was remembered of it, in every process the invalidation bus reaches; so
 * a search uses what was read in the last moment (`freshMs`: INDEX_READ_CONSISTENCY_MS, at most FRESH_MS) without
 * reading the store again (three store reads per search were a sixth of its time). That bounds how stale it
 * is should an announcement be lost or not reach another process (no Redis): as stale as the index itself may be.
 */
import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { LastKnown, type LastKnownOptions } from '../../lib/last-known.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import type { DatabaseService } from '../databases/database-service.js';

type Catalog = { tables: IndexTableRecord[]; liveJobs: IndexJobRecord[] };

export interface OutageReadsDeps extends Pick<LastKnownOptions, 'graceMs' | 'freshMs' | 'isOutage' | 'now'> {
  databases: Pick<DatabaseService, 'owned'>;
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  indexedTables(connectionIds: string[]): Promise<Catalog>;
  bus: InvalidationBus;
}

const database = (id: string) => `database:${id}`;
/** The most a search's reads are reused: as long as a verified key is trusted without reading the store (KeyCache). */
export const FRESH_MS = 5_000;
const userDatabases = (userId: string) => `user-databases:${userId}`;

/** The reads SearchService makes of the store, each answered from memory while the store is down. */
export class OutageReads {
  private readonly records: LastKnown<DatabaseConnectionRecord>;
  private readonly lists: LastKnown<{ records: DatabaseConnectionRecord[] }>;
  private readonly catalogs: LastKnown<Catalog>;

  constructor(private readonly deps: OutageReadsDeps) {
    const options = { graceMs: deps.graceMs, freshMs: deps.freshMs ?? FRESH_MS, isOutage: deps.isOutage, now: deps.now, max: 10_000 };
    this.records = new LastKnown(options);
    this.lists = new LastKnown(options);
    this.catalogs = new LastKnown(options);
    // The same messages that drop cached search pages and a user's connection ids (domain events, AccountCache).
    for (const event of ['connection.changed', 'index.synced']) deps.bus.subscribe(event, (databaseId) => this.invalidate(database(databaseId)));
    deps.bus.subscribe('user-databases', (userId) => this.invalidate(userDatabases(userId)));
  }

  /** DatabaseService.owned: the owner's connection (404 for another's, as the store says). */
  owned(userId: string, id: string): Promise<DatabaseConnectionRecord> {
    return this.records.read(`${userId}:${id}`, () => [database(id), userDatabases(userId)], () => this.deps.databases.owned(userId, id));
  }

  /** The user's connections of an environment, newest first. */
  async listOwned(userId: string, environment?: 'live' | 'test'): Promise<DatabaseConnectionRecord[]> {
    const owners = ({ records }: { records: DatabaseConnectionRecord[] }) => [userDatabases(userId), ...records.map((r) => database(r.id))];
    const { records } = await this.lists.read(`${userId}:${environment ?? '*'}`, owners, async () => ({
      records: await this.deps.connections.listOwned(userId, environment),
    }));
    return records;
  }

  /** The index's tables and running syncs of these connections. */
  indexedTables(connectionIds: string[]): Promise<Catalog> {
    return this.catalogs.read([...connectionIds].sort().join(','), () => connectionIds.map(database), () => this.deps.indexedTables(connectionIds));
  }

  private invalidate(owner: string): void {
    for (const memory of [this.records, this.lists, this.catalogs]) memory.invalidate(owner);
  }
}
