/**
 * SearchService end to end over two in-memory engines (fakes.ts): select connections -> plan -> rank in parallel ->
 * fuse -> details -> page, with the cache, the record of the search, relaxation and the index's outage.
 */
import { describe, expect, it } from 'vitest';
import { MemoryResultCache } from '../../../../src/services/search/result-cache.js';
import { SearchService } from '../../../../src/services/search/search-service.js';
import type { SearchRequest } from '../../../../src/services/search/search-request.js';
import { caller, fakeCatalog, FakeIndexEngine, FakeLiveEngine, indexed, record, table, type Row } from './fakes.js';

const rows = (...bodies: string[]): Row[] => bodies.map((body, i) => ({ id: i + 1, body }));

function setup(options: { down?: string[]; cache?: boolean } = {}) {
  let time = 1_000_000;
  const records = [record('db_1'), record('db_2')];
  // db_1: posts is synced into the index, drafts is not; db_2: notes is synced.
  const catalog = fakeCatalog(
    { db_1: [table('posts'), table('drafts')], db_2: [table('notes')] },
    [indexed('db_1', 'posts'), indexed('db_2', 'notes')],
  );
  const index = new FakeIndexEngine({
    src_db_1_posts: rows('red shoes', 'blue shoes', 'red hat'),
    src_db_2_notes: rows('red red shoes', 'green socks'),
  });
  const live = new FakeLiveEngine({
    db_1: { posts: rows('red shoes as the database holds it'), drafts: rows('red scarf', 'shoes rack') },
    db_2: { notes: rows('red shoes as the database holds it') },
  }, options.down);
  const recorded: Array<{ status: string; tables: string[] }> = [];
  const errors: unknown[] = [];
  const service = new SearchService({
    databases: { owned: async (_userId, id) => records.find((r) => r.id === id)! },
    connections: { listOwned: async () => records },
    catalog,
    engines: { index, live },
    recorder: { record: (r) => recorded.push({ status: r.status, tables: r.tables ?? [] }) },
    cache: options.cache ? new MemoryResultCache(60_000) : { enabled: false, get: async () => null, set: async () => undefined, forgetDatabase: async () => undefined, close: async () => undefined },
    cursorSecret: Buffer.alloc(32, 3),
    upgradeUrl: 'https://example.test/upgrade',
    timeoutMs: 5_000,
    onError: (error) => errors.push(error),
    providerId: 'model-a',
    embedQuery: async () => new Float32Array([1, 0]),
    now: () => time,
  });
  return { service, index, live, recorded, errors, tick: (ms: number) => (time += ms) };
}

const search = (service: SearchService, request: SearchRequest) => service.search(caller(), request);

describe('SearchService over two engines', () => {
  it('when the index and a live table both match, then their lists are fused, each row says where it came from, and the answer is approximate', async () => {
    const { service, live } = setup();
    const data = await search(service, { query: 'red shoes' });
    expect(data.total).toBe(4 + 2);
    expect(data.approximate).toBe(true);
    // Rank by rank: the index's first and the live table's first tie, and ties go by id (a live id sorts first here).
    expect(data.results.map((r) => `${r.databaseId}:${r.table}:${r.fields.body}`)).toEqual([
      'db_1:drafts:red scarf', 'db_1:posts:red shoes', 'db_1:drafts:shoes rack', 'db_2:notes:red red shoes', 'db_1:posts:blue shoes', 'db_1:posts:red hat',
    ]);
    expect(data.results.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(data.databases.map((d) => [d.databaseId, d.source, d.matches, d.status])).toEqual([['db_1', 'mixed', 5, 'ok'], ['db_2', 'index', 1, 'ok']]);
    expect(data.liveTables).toEqual([{ databaseId: 'db_1', table: 'drafts', reason: 'not_synced_yet' }]);
    // The live engine reads only what the index does not answer, knowing one more list (the index's) joins the fusion.
    expect(live.asked[0]!.plan.databases.map((d) => [d.record.id, [...d.skip]])).toEqual([['db_1', ['posts']]]);
    expect(live.asked[0]!.ask.mergedWith).toBe(1);
  });

  it('when only the index answers, then its scores stand as they are and the answer is not approximate', async () => {
    const { service } = setup();
    const data = await search(service, { query: 'red', tables: ['posts', 'notes'] });
    expect(data.approximate).toBe(false);
    expect(data.results.map((r) => [r.fields.body, r.score])).toEqual([['red shoes', 1], ['red red shoes', 1], ['red hat', 1]]);
  });

  it('when pages are read by cursor, then they are disjoint, complete and in the one-page order', async () => {
    const { service } = setup();
    const whole = await search(service, { query: 'red shoes', limit: 6 });
    const seen: string[] = [];
    let request: SearchRequest = { query: 'red shoes', limit: 2 };
    for (;;) {
      const data = await search(service, request);
      seen.push(...data.results.map((r) => r.id));
      if (!data.nextCursor) break;
      request = { query: 'red shoes', limit: 2, cursor: data.nextCursor };
    }
    expect(seen).toEqual(whole.results.map((r) => r.id));
  });

  it('when a live database fails, then the others answer, it is reported, and the search is recorded as partial', async () => {
    const { service, recorded } = setup({ down: ['db_1'] });
    const data = await search(service, { query: 'red shoes' });
    expect(data.databases.find((d) => d.databaseId === 'db_1')).toMatchObject({ status: 'error', error: { code: 'DATABASE_UNREACHABLE' } });
    expect(data.results.some((r) => r.table === 'posts')).toBe(true);
    expect(recorded.at(-1)!.status).toBe('partial');
  });

  it('when the strict query finds nothing, then a looser reading answers and the answer says what it gave up', async () => {
    const { service, index } = setup();
    const data = await search(service, { query: '"shoes red"' });
    expect(data.relaxed.map((r) => r.kind)).toEqual(['phrase']);
    expect(index.asked.length).toBeGreaterThan(1);
  });

  it("when the index's storage fails, then its tables are searched live and say why, and the index is left alone for a while", async () => {
    const { service, index, live, errors } = setup();
    index.failWith = new Error('LanceError(IO): object store did not answer');
    const data = await search(service, { query: 'red shoes' });
    expect(errors).toHaveLength(1);
    expect(data.liveTables).toContainEqual({ databaseId: 'db_2', table: 'notes', reason: 'index_unavailable' });
    expect(data.databases.every((d) => d.source === 'live')).toBe(true);
    expect(data.results.map((r) => r.fields.body)).toContain('red shoes as the database holds it');
    await search(service, { query: 'red shoes' });
    expect(errors).toHaveLength(1);
    expect(live.asked.at(-1)!.plan.databases).toHaveLength(2);
  });

  it('when a filter is asked and the index is down, then 503 INDEX_UNAVAILABLE', async () => {
    const { service, index } = setup();
    index.failWith = new Error('LanceError(IO): object store did not answer');
    await expect(search(service, { query: 'red', filter: { column: 'price', op: 'gt', value: 0 } } as SearchRequest)).rejects.toMatchObject({ code: 'INDEX_UNAVAILABLE' });
  });

  it('when the same natural search repeats, then the second is answered from the cache and recorded all the same', async () => {
    const { service, index, recorded } = setup({ cache: true });
    const first = await search(service, { query: 'red shoes' });
    const second = await search(service, { query: 'red shoes' });
    expect(second.results).toEqual(first.results);
    expect(index.asked).toHaveLength(1);
    expect(recorded).toHaveLength(2);
    expect(recorded[1]!.tables).toEqual(recorded[0]!.tables);
  });

  it('when semantic mode finds no table searched by meaning, then 409 SEMANTIC_INDEX_REQUIRED', async () => {
    const { service } = setup();
    await expect(search(service, { query: 'red', searchMode: 'semantic' })).rejects.toMatchObject({ code: 'SEMANTIC_INDEX_REQUIRED' });
  });
});
