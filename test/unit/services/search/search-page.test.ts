/** pageData: the response page from the fused answer, each engine's ranking and the route. */
import { describe, expect, it } from 'vitest';
import type { DatabaseAnswer, EngineHit, Ranking } from '../../../../src/search-core/engine.js';
import { merge } from '../../../../src/services/search/search-merge.js';
import { pageData } from '../../../../src/services/search/search-page.js';
import type { DatabasePlan } from '../../../../src/services/search/search-plan.js';
import { record } from './fakes.js';

const plan = (id: string, over: Partial<DatabasePlan> = {}): DatabasePlan => ({
  record: record(id), sources: [], live: [], indexedNames: new Set(), indexedAt: null, searchLive: false, notSemantic: [], wholeIndex: true, syncedAt: [], ...over,
});
const answer = (over: Partial<DatabaseAnswer> = {}): DatabaseAnswer => ({ status: 'ok', error: null, tookMs: null, matches: 0, approximate: false, byRankOnly: false, ...over });
const hit = (id: string, databaseId: string, rank: number): EngineHit<null> => ({ id, rank, score: 1 / rank, databaseId, engine: 'e', ref: null });
const ranking = (over: Partial<Ranking<null>>): Ranking<null> => ({
  lists: [], scored: false, total: 0, totalIsEstimate: false, databases: new Map(), tables: [], corrections: [], facets: {}, facetsAreEstimate: false, ...over,
});
const row = (table: string, id: number) => ({ table, primaryKey: { id }, fields: { id, body: `row ${id}` }, snippet: `<mark>row</mark> ${id}`, matchedColumns: ['body'] });

function page(rankings: Array<Ranking<null>>, rows: ReturnType<typeof row>[], window = { offset: 0, limit: 2, top: 2 }) {
  const plans = [plan('db_1', { sources: [{ src: 's', connectionId: 'db_1', tableName: 'posts', keyColumns: ['id'], textColumns: ['body'], semanticReady: false, filterable: [], sortable: [] }], indexedAt: new Date(10_000) }), plan('db_2', { live: [{ table: 'notes', reason: 'not_synced_yet' }] })];
  const fused = merge(rankings, window.offset, window.limit);
  return pageData({
    request: { query: 'row' }, mode: 'natural', window, route: { plans, notSemantic: [], excluded: [] },
    found: { answer: fused, rows, rankings, relaxed: [], rankTookMs: 40 },
    nextCursor: () => 'next', tookMs: 55, now: 70_000,
  });
}

describe('pageData', () => {
  const index = ranking({ scored: true, lists: [[hit('i1', 'db_1', 1), hit('i2', 'db_1', 2)]], total: 3, databases: new Map([['db_1', answer({ matches: 3 })]]) });
  const live = ranking({
    lists: [[hit('l1', 'db_2', 1)]], total: 1, databases: new Map([['db_2', answer({ tookMs: 12, matches: 1, byRankOnly: true })]]),
    tables: [{ databaseId: 'db_2', table: 'notes', scanned: true }],
  });

  it('when two engines answered, then each database says which read it, how long it took and how many rows matched', () => {
    const data = page([index, live], [row('posts', 1), row('notes', 1)]);
    expect(data.databases.map((d) => [d.databaseId, d.source, d.tookMs, d.matches, d.approximate])).toEqual([['db_1', 'index', 40, 3, false], ['db_2', 'live', 12, 1, true]]);
    expect(data.databases[0]!.lagSeconds).toBe(60);
    expect(data.unindexedTables).toEqual([{ databaseId: 'db_2', table: 'notes' }]);
    expect(data.liveTables).toEqual([{ databaseId: 'db_2', table: 'notes', reason: 'not_synced_yet' }]);
  });

  it('when more rows match than the page holds, then it links the next page; results carry their rank and identity', () => {
    const data = page([index, live], [row('posts', 1), row('notes', 1)]);
    expect([data.total, data.hasMore, data.nextCursor]).toEqual([4, true, 'next']);
    expect(data.results.map((r) => [r.id, r.rank])).toEqual([['db_1:posts:1', 1], ['db_2:notes:1', 2]]);
  });

  it('when a page row vanished since it was ranked, then it is left out of the results', () => {
    const data = page([index], [row('posts', 1), null as unknown as ReturnType<typeof row>]);
    expect(data.results.map((r) => r.id)).toEqual(['db_1:posts:1']);
  });

  it('when a live database failed, then its status and safe error are given', () => {
    const failed = ranking({ databases: new Map([['db_2', answer({ status: 'timeout', error: { code: 'DATABASE_TIMEOUT', message: 'slow' }, tookMs: 5000, byRankOnly: true })]]) });
    const data = page([index, failed], [row('posts', 1), row('posts', 2)]);
    expect(data.databases[1]).toMatchObject({ status: 'timeout', error: { code: 'DATABASE_TIMEOUT' }, tookMs: 5000 });
  });
});
