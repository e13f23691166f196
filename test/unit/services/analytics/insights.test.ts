import { describe, expect, it } from 'vitest';
import type { QueryStats, SearchTotals } from '../../../../src/repositories/search-stats-repository.js';
import { resolveRange } from '../../../../src/rules/analytics-range.js';
import { buildInsights, confidence, growthRate, healthScore, relatedQueries, type InsightFacts } from '../../../../src/services/analytics/insights.js';

const now = new Date('2026-11-22T10:00:00Z');
const totals = (over: Partial<SearchTotals> = {}): SearchTotals => ({
  searches: 100, averageMs: 50, maxMs: 90, averageResults: 4, zeroResults: 0, withResults: 100, slow: 0, failed: 0, unindexed: 0, activeUsers: 1, ...over,
});
const q = (query: string, count: number, averageMs = 10): QueryStats => ({ query, count, averageMs, averageResults: 1, lastAt: now });
const facts = (over: Partial<InsightFacts> = {}): InsightFacts => ({
  now,
  range: resolveRange({ period: 'week' }, now),
  totals: totals(),
  p95Ms: 80,
  previousSearches: 100,
  slowQueries: [],
  slowTables: [],
  zeroQueries: [],
  failedQueries: [],
  topTables: [{ table: 'products', count: 100 }],
  unindexed: [],
  peakHour: { bucket: '2026-11-21T10:00:00Z', searches: 20 },
  tier: { name: 'free', requestsPerHour: 1000 },
  queryShifts: [],
  topQueries: [],
  ...over,
});
const insightsOf = (over: Partial<InsightFacts>, include = true) => buildInsights(facts(over), include).insights;

describe('healthScore', () => {
  it('when nothing is wrong or nothing was searched, then 100', () => {
    expect(healthScore(totals())).toBe(100);
    expect(healthScore(totals({ searches: 0, withResults: 0 }))).toBe(100);
  });

  it('when shares of searches go wrong, then 100 - 40 zero - 30 slow - 20 failed - 10 unindexed, rounded', () => {
    expect(healthScore(totals({ zeroResults: 10 }))).toBe(96);
    expect(healthScore(totals({ zeroResults: 10, slow: 20, failed: 5, unindexed: 50 }))).toBe(100 - 4 - 6 - 1 - 5);
    expect(healthScore(totals({ searches: 17, zeroResults: 2, slow: 3, failed: 2, unindexed: 4 }))).toBe(85);
  });

  it('when every search is everything bad, then 0, never below', () => {
    expect(healthScore(totals({ zeroResults: 100, slow: 100, failed: 100, unindexed: 100 }))).toBe(0);
  });
});

describe('growthRate and confidence', () => {
  it('when the previous range had searches, then the percent change; without, 100 or 0', () => {
    expect(growthRate(310, 250)).toBe(24);
    expect(growthRate(50, 100)).toBe(-50);
    expect(growthRate(5, 0)).toBe(100);
    expect(growthRate(0, 0)).toBe(0);
  });

  it('when few searches were looked at, then low confidence, reaching 1 at 100', () => {
    expect([0, 17, 100, 5000].map(confidence)).toEqual([0, 0.17, 1, 1]);
  });
});

describe('performance rules', () => {
  it.each([
    [1, 'low'], [2, 'medium'], [9, 'medium'], [10, 'high'],
  ])('when %i of 100 searches are over 500 ms, then slow_queries with severity %s', (slow, severity) => {
    const [insight] = insightsOf({ totals: totals({ slow }), slowQueries: [q('report', slow, 700)], slowTables: [{ table: 'documents', count: slow }], p95Ms: 510 }).performanceInsights;
    expect(insight).toMatchObject({ type: 'slow_queries', severity, affectedQueries: ['report'] });
    expect(insight!.description).toBe(`p95 response time was 510 ms. Slowest queries: "report" (700 ms average over ${slow}). Tables behind them: documents (${slow}).`);
  });

  it('when a slow table has no full-text index, then the recommendation is the index; otherwise narrowing', () => {
    const base = { totals: totals({ slow: 5 }), slowQueries: [q('report', 5, 900)], slowTables: [{ table: 'documents', count: 5 }] };
    const unindexed = [{ databaseId: 'db_1', engine: 'postgres' as const, tables: [{ table: 'documents', searches: 5, schema: null }] }];
    expect(insightsOf({ ...base, unindexed }).performanceInsights[0]!.recommendation!.action).toBe('Add a full-text index to documents (the statements are in optimizationInsights)');
    expect(insightsOf(base).performanceInsights[0]!.recommendation!.action).toBe('Narrow these searches with "databases" or "tables", and check the load on documents');
  });

  it.each([
    [4, 'low'], [5, 'medium'], [20, 'high'],
  ])('when %i of 100 searches found nothing, then zero_results with severity %s', (zeroResults, severity) => {
    expect(insightsOf({ totals: totals({ zeroResults }), zeroQueries: [q('zzz', zeroResults)] }).performanceInsights[0]).toMatchObject({ type: 'zero_results', severity, affectedQueries: ['zzz'] });
  });

  it.each([
    [0.5, 'low'], [1, 'medium'], [5, 'high'],
  ])('when %d% of searches failed, then failed_searches with severity %s', (percent, severity) => {
    const searches = 200;
    const failed = (percent / 100) * searches;
    expect(insightsOf({ totals: totals({ searches, failed }), failedQueries: [q('x', failed)] }).performanceInsights[0]).toMatchObject({ type: 'failed_searches', severity });
  });

  it('when nothing is slow, empty or failed, then no performance insight', () => {
    expect(insightsOf({}).performanceInsights).toEqual([]);
  });
});

describe('usage rules', () => {
  it.each([
    [100, 100, 'flat', 'low', 'Search volume is steady (+0%)'],
    [109, 100, 'flat', 'low', 'Search volume is steady (+9%)'],
    [110, 100, 'up', 'low', 'Search volume grew 10%'],
    [120, 100, 'up', 'medium', 'Search volume grew 20%'],
    [150, 100, 'up', 'high', 'Search volume grew 50%'],
    [90, 100, 'down', 'low', 'Search volume fell 10%'],
    [40, 100, 'down', 'high', 'Search volume fell 60%'],
    [12, 0, 'up', 'high', '12 searches, none in the 7 days before'],
  ])('when %i searches follow %i, then growth is %s with %s significance', (current, previous, trend, significance, title) => {
    const [growth] = insightsOf({ totals: totals({ searches: current, withResults: current }), previousSearches: previous }).usageInsights;
    expect(growth).toMatchObject({ type: 'growth', trend, significance, title });
    expect(growth!.description).toBe(`${current} searches from 2026-11-16 to 2026-11-22 against ${previous} in the 7 days before.`);
  });

  it('when growth is up and significant, then it recommends indexing the most searched tables; when low, nothing', () => {
    expect(insightsOf({ totals: totals({ searches: 150, withResults: 150 }) }).usageInsights[0]!.recommendation).toEqual({
      action: 'Make sure the most searched tables (products) have full-text indexes before the load grows', effort: 'low',
    });
    expect(insightsOf({}).usageInsights[0]).not.toHaveProperty('recommendation');
  });

  it.each([
    [499, 'low', false], [500, 'medium', true], [800, 'high', true],
  ])('when the busiest hour has %i searches on the free tier, then peak_usage %s', (searches, significance, recommends) => {
    const peak = insightsOf({ peakHour: { bucket: '2026-11-21T10:00:00Z', searches } }).usageInsights[1]!;
    expect(peak).toMatchObject({ type: 'peak_usage', significance, title: `Busiest hour: 2026-11-21 10:00 UTC with ${searches} searches` });
    expect(peak.recommendation?.action).toBe(recommends ? 'Upgrade to the pro tier (10,000 requests per hour) or spread searches over more hours' : undefined);
  });

  it('when nobody searched in either range, then no usage insight', () => {
    expect(insightsOf({ totals: totals({ searches: 0, withResults: 0 }), previousSearches: 0, peakHour: null }).usageInsights).toEqual([]);
  });
});

describe('optimization rule', () => {
  const db = (tables: Array<{ table: string; searches: number; indexed?: boolean }>) => ({
    databaseId: 'db_1',
    engine: 'mysql' as const,
    tables: tables.map((t) => ({
      table: t.table,
      searches: t.searches,
      schema: { name: t.table, schema: null, primaryKey: ['id'], rowEstimate: 1, columns: [], textColumns: ['body'], fullTextIndexes: t.indexed ? [{ name: 'ft', kind: 'mysql_fulltext' as const, columns: ['body'] }] : [] },
    })),
  });

  it.each([
    [4, 'low'], [5, 'medium'], [25, 'high'],
  ])('when the most searched unindexed table has %i of 100 searches, then impact %s, with the statement', (searches, impact) => {
    const [insight] = insightsOf({ unindexed: [db([{ table: 'reviews', searches }])] }).optimizationInsights;
    expect(insight).toMatchObject({ type: 'missing_fulltext_index', databaseId: 'db_1', impact, title: 'reviews is searched without a full-text index' });
    expect(insight!.recommendations).toEqual([{ table: 'reviews', action: 'ALTER TABLE reviews ADD FULLTEXT INDEX reviews_fts (body)', benefit: `${searches} searches in this period would use the index instead of a scan.` }]);
  });

  it('when a table has been indexed since, then it is left out; when none remain, no insight', () => {
    const [insight] = insightsOf({ unindexed: [db([{ table: 'a', searches: 3 }, { table: 'b', searches: 9, indexed: true }])] }).optimizationInsights;
    expect(insight!.recommendations!.map((r) => r.table)).toEqual(['a']);
    expect(insightsOf({ unindexed: [db([{ table: 'b', searches: 9, indexed: true }])] }).optimizationInsights).toEqual([]);
  });

  it('when the schema was never discovered, then the action names the table and asks for discovery', () => {
    const unindexed = [{ databaseId: 'db_9', engine: 'postgres' as const, tables: [{ table: 'orders', searches: 2, schema: null }] }];
    expect(insightsOf({ unindexed }).optimizationInsights[0]!.recommendations![0]!.action).toBe(
      'Discover the schema (GET /api/v1/databases/db_9/schema) so the statement can name the text columns of orders, then add a full-text index',
    );
  });
});

describe('trend rules', () => {
  const shifts = [
    { query: 'headphones', current: 7, previous: 3 },
    { query: 'cable', current: 3, previous: 0 },
    { query: 'rare', current: 2, previous: 0 },
    { query: 'printer', current: 1, previous: 4 },
    { query: 'steady', current: 5, previous: 4 },
    { query: 'dip', current: 3, previous: 5 },
  ];

  it('when a query doubles with at least 3 searches, then it rises; when it halves from at least 3, it falls', () => {
    const trends = insightsOf({ queryShifts: shifts, topQueries: ['headphones', 'wireless headphones', 'usb cable'] }).trendInsights;
    expect(trends.map((t) => [t.type, t.title, t.relatedQueries])).toEqual([
      ['rising_query', '"headphones" is rising', ['wireless headphones']],
      ['rising_query', '"cable" is rising', ['usb cable']],
      ['falling_query', '"printer" is falling', []],
    ]);
  });

  it('when queries share a word of three letters or more, then they are related', () => {
    expect(relatedQueries('USB-C cable', ['usb-c cable', 'cable ties', 'usb hub', 'a b', 'USB-C cable'])).toEqual(['usb-c cable', 'cable ties', 'usb hub']);
    expect(relatedQueries('tv', ['tv stand'])).toEqual([]);
  });
});

describe('summary and recommendations', () => {
  it('when includeRecommendations is false, then no recommendation anywhere and no topRecommendations', () => {
    const over = { totals: totals({ slow: 20, zeroResults: 30, withResults: 70 }), slowQueries: [q('a', 20)], zeroQueries: [q('b', 30)], unindexed: [{ databaseId: 'd', engine: 'sqlite' as const, tables: [{ table: 't', searches: 30, schema: null }] }] };
    const withThem = insightsOf(over);
    expect(withThem.summary.topRecommendations).toHaveLength(3);
    const without = insightsOf(over, false);
    expect(JSON.stringify(without)).not.toMatch(/"recommendations?"/);
    expect(without.summary.topRecommendations).toEqual([]);
    expect(without.optimizationInsights).toHaveLength(1);
  });

  it('when findings differ in severity, then topRecommendations lists the most severe first', () => {
    const top = insightsOf({ totals: totals({ slow: 1, zeroResults: 30, withResults: 70 }), slowQueries: [q('a', 1)], zeroQueries: [q('b', 30)] }).summary.topRecommendations;
    expect(top[0]).toMatch(/^Check that the data for "b"/);
    expect(top[1]).toMatch(/^Narrow these searches/);
  });

  it('when built, then the key metrics, the period, and the next review one range later', () => {
    const { summary, analysisperiod, generatedAt } = insightsOf({ totals: totals({ withResults: 88 }), previousSearches: 80 });
    expect(analysisperiod).toBe('week');
    expect(generatedAt).toBe('2026-11-22T10:00:00.000Z');
    expect(summary.keyMetrics).toEqual({ totalSearches: 100, growthRate: 25, userSatisfaction: 88 });
    expect(summary.nextReview).toBe('2026-11-29T10:00:00.000Z');
  });
});
