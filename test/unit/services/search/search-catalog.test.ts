/**
 * SearchCatalog: one view of each connection for planning, live search and suggestions, dropped when it changes; its
 * tables are the connection catalog indexing reads too.
 */
import { describe, expect, it } from 'vitest';
import type { SqlExecutor } from '../../../../src/connectors/index.js';
import { ConnectionCatalog } from '../../../../src/search-core/connection-catalog.js';
import { IndexUpkeep } from '../../../../src/search-index/upkeep.js';
import type { UserCaller } from '../../../../src/services/callers.js';
import { DatabaseService } from '../../../../src/services/databases/database-service.js';
import { DeadlineError, SearchCatalog } from '../../../../src/services/search/search-catalog.js';
import { record, table } from './fakes.js';

// Discovering full-text indexes reads the user's database; here it is counted instead.
const discovered = { count: 0 };
const loadFullText = async () => {
  discovered.count += 1;
  return { engine: 'postgres', tables: [], fullTextIndexes: [], ftsColumns: {}, discovery: discovered.count } as never;
};

function setup(executorFor: () => Promise<SqlExecutor> = async () => ({}) as SqlExecutor) {
  discovered.count = 0;
  const fresh: boolean[] = [];
  const connections = new ConnectionCatalog({
    tablesOf: async (_r, isFresh) => {
      fresh.push(isFresh);
      return [table('posts')];
    },
  });
  const catalog = new SearchCatalog({
    connections,
    executorFor,
    indexedTables: async (ids) => ({ tables: [], liveJobs: ids.map((id) => ({ connectionId: id }) as never) }),
    loadFullText,
  });
  return { catalog, connections, fresh };
}

describe('SearchCatalog', () => {
  it('when live search and suggestions read a connection twice, then its full-text indexes are discovered once', async () => {
    const { catalog } = setup();
    const first = await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    const second = await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    expect(second.schema).toBe(first.schema);
    expect(discovered.count).toBe(1);
  });

  it('when the connection changes (the bus says so, or its version moves), then it is discovered again', async () => {
    const { catalog } = setup();
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    catalog.forget('db_1');
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    await catalog.liveSchema(record('db_1', { updatedAt: new Date(2_000) }), Date.now() + 1000);
    expect(discovered.count).toBe(3);
  });

  it('when the tables are discovered afresh, then the full-text indexes are too, so the two never disagree', async () => {
    const { catalog, fresh } = setup();
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    await catalog.tables(record('db_1'));
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    expect(discovered.count).toBe(1);
    await catalog.tables(record('db_1'), true);
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    expect(fresh).toEqual([false, true]);
    expect(discovered.count).toBe(2);
  });

  it("when indexing discovers a connection's tables afresh (a replaced SQLite file), then the live search's full-text indexes are discovered again", async () => {
    const { catalog, connections, fresh } = setup();
    const upkeep = new IndexUpkeep({
      catalog: connections,
      queue: { enqueue: async () => [], keepIndexable: async (_r, tables) => tables, indexable: (tables) => tables, removeRows: async () => undefined },
      tables: { listByConnections: async () => [] },
      jobs: { cancelConnection: async () => [] },
      runner: { abortConnection: async () => undefined },
      onError: (error) => {
        throw error;
      },
    });
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    await upkeep.sourceReplaced(record('db_1'));
    await catalog.liveSchema(record('db_1'), Date.now() + 1000);
    expect(fresh).toEqual([true]);
    expect(discovered.count).toBe(2);
  });

  it("when the owner refreshes the connection's schema (getDatabaseSchema, refresh), then the live search's full-text indexes are discovered again", async () => {
    const { catalog, connections, fresh } = setup();
    const connection = record('db_1', { schemaCache: [table('posts')] } as never);
    const databases = new DatabaseService({
      catalog: connections,
      // Discovering the schema past the catalog would leave the full-text indexes as they were.
      sources: { discover: async () => [table('posts')] },
      connections: { findOwned: async () => connection, findById: async () => connection },
    } as never);
    await catalog.liveSchema(connection, Date.now() + 1000);
    await databases.schema({ user: { id: 'usr_1' } } as UserCaller, 'db_1', true);
    await catalog.liveSchema(connection, Date.now() + 1000);
    expect(fresh).toEqual([true]);
    expect(discovered.count).toBe(2);
  });

  it('when the database does not answer before the deadline, then a DeadlineError', async () => {
    const { catalog } = setup(() => new Promise(() => undefined));
    await expect(catalog.liveSchema(record('db_1'), Date.now() + 20)).rejects.toBeInstanceOf(DeadlineError);
  });

  it("when planning asks the index's state, then it reads it for exactly the connections asked", async () => {
    const { catalog } = setup();
    expect((await catalog.indexState(['db_1', 'db_2'])).liveJobs.map((j) => j.connectionId)).toEqual(['db_1', 'db_2']);
  });
});
