/** OutageReads: what a search reads of the store, answered from memory while the store is down. */
import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import type { DatabaseConnectionRecord } from '../../../../src/repositories/database-connection-repository.js';
import { OutageReads } from '../../../../src/services/search/outage-reads.js';

class StoreDown extends Error {}

function setup() {
  let time = 1_000_000;
  let storeUp = true;
  const record = (id: string) => ({ id, userId: 'usr_1', environment: 'test' }) as DatabaseConnectionRecord;
  const reach = <T>(value: () => T) => (storeUp ? Promise.resolve(value()) : Promise.reject(new StoreDown('store down')));
  const bus = new MemoryBus();
  const reads = new OutageReads({
    databases: { owned: (_userId, id) => reach(() => record(id)) },
    connections: { listOwned: () => reach(() => [record('db_1'), record('db_2')]) },
    indexedTables: () => reach(() => ({ tables: [], liveJobs: [] })),
    bus,
    graceMs: 60_000,
    isOutage: (error) => error instanceof StoreDown,
    now: () => time,
  });
  return { reads, bus, tick: (ms: number) => (time += ms), down: () => (storeUp = false) };
}

describe('OutageReads', () => {
  it('when the store goes down after a search read them, then the connection, the list and the catalog are answered as then', async () => {
    const { reads, tick, down } = setup();
    await reads.owned('usr_1', 'db_1');
    await reads.listOwned('usr_1', 'test');
    await reads.indexedTables(['db_2', 'db_1']);
    down();
    tick(59_000);
    expect((await reads.owned('usr_1', 'db_1')).id).toBe('db_1');
    expect((await reads.listOwned('usr_1', 'test')).map((r) => r.id)).toEqual(['db_1', 'db_2']);
    expect(await reads.indexedTables(['db_1', 'db_2'])).toEqual({ tables: [], liveJobs: [] });
    await expect(reads.owned('usr_1', 'db_3')).rejects.toBeInstanceOf(StoreDown);
  });

  it('when a connection changed (connection.changed event) before the outage, then nothing read of it is remembered', async () => {
    const { reads, bus, tick, down } = setup();
    await reads.owned('usr_1', 'db_1');
    await reads.listOwned('usr_1', 'test');
    await reads.indexedTables(['db_1']);
    tick(1);
    bus.publish('connection.changed', 'db_1');
    down();
    await expect(reads.owned('usr_1', 'db_1')).rejects.toBeInstanceOf(StoreDown);
    await expect(reads.listOwned('usr_1', 'test')).rejects.toBeInstanceOf(StoreDown);
    await expect(reads.indexedTables(['db_1'])).rejects.toBeInstanceOf(StoreDown);
  });

  it("when a user's connections were added or removed (user-databases message), then their list is not remembered", async () => {
    const { reads, bus, tick, down } = setup();
    await reads.listOwned('usr_1', 'test');
    tick(1);
    bus.publish('user-databases', 'usr_1');
    down();
    await expect(reads.listOwned('usr_1', 'test')).rejects.toBeInstanceOf(StoreDown);
  });
});
