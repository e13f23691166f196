import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import { HistoryCache } from '../../../../src/services/search/history-cache.js';
import { SearchHistoryService, type History } from '../../../../src/services/search/search-history-service.js';
import { SearchRecorder } from '../../../../src/services/search/search-recorder.js';
import type { SearchRecordRow } from '../../../../src/repositories/search-record-repository.js';
import type { KeyCaller } from '../../../../src/services/callers.js';

const page = (total: number): History => ({ total, limit: 20, offset: 0, searches: [] });

/** Two processes behind a load balancer: one bus between them (Redis pub/sub in production). */
function twoProcesses(now: () => number = Date.now) {
  const bus = new MemoryBus();
  return { bus, a: new HistoryCache<History>(bus, 5_000, 10, now), b: new HistoryCache<History>(bus, 5_000, 10, now) };
}

describe('HistoryCache', () => {
  it('when a user search is recorded in one process, then only that process reads again until it is written', () => {
    const { a, b } = twoProcesses();
    a.set('u1', '20:0', page(1), a.clock() - 1);
    b.set('u1', '20:0', page(1), b.clock() - 1);
    a.forget('u1');
    expect(a.get('u1', '20:0')).toBeNull();
    expect(b.get('u1', '20:0')).toEqual(page(1));
    a.changed('u1');
    expect(b.get('u1', '20:0')).toBeNull();
  });

  it("when one user's history changes, then other users' pages stay", () => {
    const { a } = twoProcesses();
    a.set('u1', '20:0', page(1), a.clock() - 1);
    a.set('u2', '20:0', page(2), a.clock() - 1);
    a.changed('u1');
    expect(a.get('u2', '20:0')).toEqual(page(2));
  });

  it('when a read started before the change, then what it found is not kept', () => {
    let time = 1_000;
    const { a } = twoProcesses(() => time);
    const readAt = a.clock();
    time += 1;
    a.forget('u1');
    time += 1;
    a.set('u1', '20:0', page(1), readAt);
    expect(a.get('u1', '20:0')).toBeNull();
  });

  it('when rows were deleted (retention), then every page of every user goes', () => {
    const { a, b } = twoProcesses();
    b.set('u1', '20:0', page(1), b.clock() - 1);
    b.set('u2', '5:10', page(2), b.clock() - 1);
    a.changed('*');
    expect([b.get('u1', '20:0'), b.get('u2', '5:10')]).toEqual([null, null]);
  });

  it('when the TTL has passed (a lost message), then the page is read again', () => {
    let time = 1_000;
    const { a } = twoProcesses(() => time);
    a.set('u1', '20:0', page(1), time - 1);
    time += 5_001;
    expect(a.get('u1', '20:0')).toBeNull();
  });

  it('when one user reads more pages than its bound, then their oldest page goes first', () => {
    const cache = new HistoryCache<History>(new MemoryBus(), 5_000, 10, Date.now, 3);
    for (let offset = 0; offset < 4; offset++) cache.set('u1', `20:${offset}`, page(offset), cache.clock() - 1);
    expect(cache.get('u1', '20:0')).toBeNull();
    expect(cache.get('u1', '20:3')).toEqual(page(3));
  });

  it('when more users than its bound are cached, then the oldest goes first', () => {
    const { a } = twoProcesses();
    for (let i = 0; i < 11; i++) a.set(`u${i}`, '20:0', page(i), a.clock() - 1);
    expect(a.get('u0', '20:0')).toBeNull();
    expect(a.get('u10', '20:0')).toEqual(page(10));
  });
});

describe('SearchHistoryService with the cache', () => {
  it('when history is read twice, then the store is read once; after a search is recorded, the next read has it', async () => {
    const bus = new MemoryBus();
    const cache = new HistoryCache<History>(bus, 5_000);
    const stored: SearchRecordRow[] = [];
    let reads = 0;
    const recorder = new SearchRecorder({
      records: { insertMany: async (rows) => void stored.push(...rows) },
      flushMs: 60_000,
      onError: (error) => { throw error; },
      onRecorded: (userId) => cache.forget(userId),
      onWritten: (userIds) => userIds.forEach((userId) => cache.changed(userId)),
    });
    const history = new SearchHistoryService({
      records: { page: async (userId) => (reads++, { rows: stored.filter((r) => r.userId === userId), total: stored.length }) },
      stats: {} as never,
      flushPending: () => recorder.flush(),
      now: Date.now,
      cache,
    });
    const caller = { kind: 'key', user: { id: 'u1' }, key: { id: 'k1' } } as unknown as KeyCaller;
    const record = () => recorder.record({
      userId: 'u1', keyId: 'k1', query: 'river', searchMode: 'natural', databases: [], tables: null, resultCount: 1,
      responseTimeMs: 3, status: 'ok', unindexedTables: null, createdAt: new Date(),
    });

    record();
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect((await history.history(caller, {})).total).toBe(1);
    // The read above raced with the write's invalidation in the same millisecond at worst: read once more to settle.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await history.history(caller, {});
    const before = reads;
    expect((await history.history(caller, {})).total).toBe(1);
    expect(reads).toBe(before);

    record();
    expect((await history.history(caller, {})).total).toBe(2);
    expect(reads).toBe(before + 1);
  });
});
