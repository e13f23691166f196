/**
 * Analytics from real traffic: users register, mint keys, make key requests (some failing, some blocked by the
 * rate limit) and run searches, recorded the way the search service records them (services.searchRecorder). Every
 * figure below is what this file did, written out by hand.
 */
import ExcelJS from 'exceljs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseConnectionModel, SearchRecordModel } from '../../src/models/index.js';
import { searchRecordRepository } from '../../src/repositories/search-record-repository.js';
import { rebuildRollups, rollupTables } from '../../src/repositories/search-rollups.js';
import { createKey, registerUser, uniqueEmail, type TestKey, type TestUser } from '../support/factories.js';
import { grantPlan, makeAdmin } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const DAY = 86_400_000;
/** Rate limits, "today" and retention run on this clock: noon UTC of the real day, so registrations share the day. */
const noon = new Date();
noon.setUTCHours(12, 0, 0, 0);
let clock = noon.getTime();
const dayOf = (daysAgo: number) => new Date(noon.getTime() - daysAgo * DAY).toISOString().slice(0, 10);
const at = (daysAgo: number, hour: number, minute = 0) => new Date(noon.getTime() - daysAgo * DAY + (hour - 12) * 3_600_000 + minute * 60_000);
const T = dayOf(0);

const DB = { pg: 'db_analytics_pg', my: 'db_analytics_my', lite: 'db_analytics_lite' } as const;
type Db = keyof typeof DB;

interface Seed {
  user: 'alice' | 'bob';
  q: string;
  when: Date;
  ms: number;
  results: number;
  status?: 'ok' | 'partial' | 'error';
  tables: string[];
  dbs?: Db[];
  unindexed?: Array<[Db, string]>;
}

const BROKEN = 'broken "cable", 2m';
const seeds: Seed[] = [
  // alice, this week (the default range: the 7 days ending today)
  ...[[1, 10, 5, 101], [1, 10, 15, 113], [1, 10, 25, 127], [1, 10, 35, 119], [2, 9, 10, 132], [2, 9, 20, 128]].map(
    ([d, h, m, ms]) => ({ user: 'alice' as const, q: 'headphones', when: at(d!, h!, m), ms: ms!, results: 10, tables: ['products'] }),
  ),
  { user: 'alice', q: 'wireless headphones', when: at(1, 14), ms: 110, results: 7, tables: ['products'] },
  ...[0, 10, 20].map((m) => ({ user: 'alice' as const, q: 'usb cable', when: at(2, 15, m), ms: 50, results: 4, tables: ['products'] })),
  { user: 'alice', q: 'annual report', when: at(3, 11), ms: 900, results: 2, tables: ['documents'], unindexed: [['pg', 'documents']] },
  { user: 'alice', q: 'annual report', when: at(3, 16), ms: 700, results: 2, tables: ['documents'], unindexed: [['pg', 'documents']] },
  { user: 'alice', q: 'zzzx', when: at(0, 8), ms: 30, results: 0, tables: ['products'] },
  { user: 'alice', q: 'zzzx', when: at(0, 9), ms: 30, results: 0, tables: ['products'] },
  { user: 'alice', q: BROKEN, when: at(4, 12), ms: 80, results: 0, status: 'error', tables: ['reviews'], dbs: ['my'] },
  { user: 'alice', q: 'reviews noise', when: at(4, 13), ms: 600, results: 3, status: 'partial', tables: ['reviews'], dbs: ['pg', 'my'], unindexed: [['my', 'reviews']] },
  { user: 'alice', q: 'notes', when: at(5, 9), ms: 40, results: 5, tables: ['notes'], dbs: ['lite'], unindexed: [['lite', 'notes']] },
  // alice, the week before
  { user: 'alice', q: 'headphones', when: at(8, 10), ms: 100, results: 9, tables: ['products'] },
  ...[0, 10, 20, 30].map((m) => ({ user: 'alice' as const, q: 'printer', when: at(9, 10, m), ms: 70, results: 1, tables: ['products'] })),
  // bob, this week
  { user: 'bob', q: 'headphones', when: at(0, 10), ms: 60, results: 8, tables: ['products'] },
  { user: 'bob', q: 'headphones', when: at(0, 10, 30), ms: 60, results: 9, tables: ['products'] },
  { user: 'bob', q: 'laptop', when: at(1, 9), ms: 90, results: 0, tables: ['products'] },
];
const aliceWeek = seeds.filter((s) => s.user === 'alice' && s.when >= at(6, 0)).sort((a, b) => a.when.getTime() - b.when.getTime());

const adminEmail = uniqueEmail('admin');
let t: TestServer;
let alice: TestUser, bob: TestUser, carol: TestUser, admin: TestUser;
let aliceKey: TestKey, aliceEnterprise: TestKey, bobKey: TestKey;
const get = (path: string, user: TestUser) => t.client.get(path, { token: user.token });

beforeAll(async () => {
  t = await startTestServer({}, { now: () => clock });
  alice = await registerUser(t.client, { name: 'Alice' });
  bob = await registerUser(t.client, { name: 'Bob' });
  carol = await registerUser(t.client, { name: 'Carol' });
  admin = await registerUser(t.client, { email: adminEmail, name: 'Admin' });
  await makeAdmin(t, admin);
  await grantPlan(t, alice, 'enterprise');
  aliceKey = await createKey(t.client, alice, { rateLimitTier: 'pro' });
  aliceEnterprise = await createKey(t.client, alice, { rateLimitTier: 'enterprise', permissions: ['analytics'] });
  bobKey = await createKey(t.client, bob, { rateLimitTier: 'free' });
  await connectDatabases(alice.id);
  for (const seed of seeds) {
    const owner = seed.user === 'alice' ? { userId: alice.id, keyId: aliceKey.id } : { userId: bob.id, keyId: bobKey.id };
    t.server.services.searchRecorder.record({
      ...owner,
      query: seed.q,
      searchMode: 'natural',
      databases: (seed.dbs ?? ['pg']).map((db) => DB[db]),
      tables: seed.tables,
      resultCount: seed.results,
      responseTimeMs: seed.ms,
      status: seed.status ?? 'ok',
      unindexedTables: (seed.unindexed ?? []).map(([db, table]) => ({ databaseId: DB[db], table })),
      createdAt: seed.when,
    });
  }
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

/**
 * Alice's three connections, as the databases service stores them (it is built separately): engine and the schema
 * its discovery cached. The MySQL one was never discovered.
 */
async function connectDatabases(userId: string) {
  const base = { userId, host: '127.0.0.1', port: 5432, username: 'app', passwordEncrypted: null, ssl: false, environment: 'test' as const, tables: null };
  const text = (name: string) => ({ name, type: 'text', searchable: true });
  await DatabaseConnectionModel.create({
    ...base, id: DB.pg, name: 'Catalog', engine: 'postgres', database: 'catalog',
    schemaCache: [
      { name: 'documents', schema: 'public', primaryKey: ['id'], rowEstimate: 1000, columns: [{ name: 'id', type: 'integer', searchable: false }, text('title'), text('body')], textColumns: ['title', 'body'], fullTextIndexes: [] },
      { name: 'products', schema: 'public', primaryKey: ['id'], rowEstimate: 50, columns: [text('name')], textColumns: ['name'], fullTextIndexes: [{ name: 'products_fts', kind: 'gin_tsvector', columns: ['name'] }] },
    ],
  });
  await DatabaseConnectionModel.create({
    ...base, id: DB.my, name: 'Reviews', engine: 'mysql', database: 'reviews', port: 3306,
    schemaCache: [{ name: 'reviews', schema: null, primaryKey: ['id'], rowEstimate: 10, columns: [text('title'), text('body')], textColumns: ['title', 'body'], fullTextIndexes: [] }],
  });
  await DatabaseConnectionModel.create({
    ...base, id: DB.lite, name: 'Notes', engine: 'sqlite', database: 'notes.sqlite', host: null, port: null, username: null,
    schemaCache: [{ name: 'notes', schema: null, primaryKey: ['id'], rowEstimate: 3, columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'text', type: 'TEXT', searchable: true }], textColumns: ['text'], fullTextIndexes: [] }],
  });
}

/** Alice's week, day by day (T-6 has no searches: its bucket is there, empty). */
const aliceDays = [
  { date: dayOf(6), query_count: 0, avg_response_time: 0, topQueries: [], popularCategories: [] },
  { date: dayOf(5), query_count: 1, avg_response_time: 40, topQueries: ['notes'], popularCategories: ['notes'] },
  { date: dayOf(4), query_count: 2, avg_response_time: 340, topQueries: [BROKEN, 'reviews noise'], popularCategories: ['reviews'] },
  { date: dayOf(3), query_count: 2, avg_response_time: 800, topQueries: ['annual report'], popularCategories: ['documents'] },
  { date: dayOf(2), query_count: 5, avg_response_time: 82, topQueries: ['usb cable', 'headphones'], popularCategories: ['products'] },
  { date: dayOf(1), query_count: 5, avg_response_time: 114, topQueries: ['headphones', 'wireless headphones'], popularCategories: ['products'] },
  { date: T, query_count: 2, avg_response_time: 30, topQueries: ['zzzx'], popularCategories: ['products'] },
];
const timeSeries = aliceDays.map(({ date, query_count, avg_response_time }) => ({ date, query_count, avg_response_time }));
const alicePopular = [
  { query_text: 'headphones', frequency: 6, avg_time: 120, avg_results: 10, last_used: at(1, 10, 35).toISOString() },
  { query_text: 'usb cable', frequency: 3, avg_time: 50, avg_results: 4, last_used: at(2, 15, 20).toISOString() },
  { query_text: 'annual report', frequency: 2, avg_time: 800, avg_results: 2, last_used: at(3, 16).toISOString() },
  { query_text: 'zzzx', frequency: 2, avg_time: 30, avg_results: 0, last_used: at(0, 9).toISOString() },
  { query_text: BROKEN, frequency: 1, avg_time: 80, avg_results: 0, last_used: at(4, 12).toISOString() },
  { query_text: 'notes', frequency: 1, avg_time: 40, avg_results: 5, last_used: at(5, 9).toISOString() },
  { query_text: 'reviews noise', frequency: 1, avg_time: 600, avg_results: 3, last_used: at(4, 13).toISOString() },
  { query_text: 'wireless headphones', frequency: 1, avg_time: 110, avg_results: 7, last_used: at(1, 14).toISOString() },
];
const statements = {
  documents: "CREATE INDEX documents_fts ON documents USING GIN (to_tsvector('english', coalesce(title, '') || ' ' || coalesce(body, '')))",
  reviews: 'ALTER TABLE reviews ADD FULLTEXT INDEX reviews_fts (title, body)',
  notes: "CREATE VIRTUAL TABLE notes_fts USING fts5(text, content='notes', content_rowid='id'); INSERT INTO notes_fts(notes_fts) VALUES ('rebuild')",
};
const recommendationsOf = {
  slow: 'Add a full-text index to documents, reviews (the statements are in optimizationInsights)',
  failed: 'Check the failing connections with GET /api/v1/databases/{databaseId}/status; raise SEARCH_TIMEOUT_MS if they time out',
  growth: 'Make sure the most searched tables (products, documents, reviews) have full-text indexes before the load grows',
};

describe('traffic that is not a search', () => {
  it('when a key makes requests, fails validation and gets blocked, then key usage counts them and search analytics do not', async () => {
    const probe = await createKey(t.client, alice, { rateLimitTier: 'pro', permissions: ['analytics'] });
    for (let i = 0; i < 3; i += 1) expect((await t.client.get('/api/v1/search/history', { token: probe.secret })).status).toBe(200);
    expect((await t.client.get('/api/v1/search/history?limit=0', { token: probe.secret })).status).toBe(400);
    expect((await t.client.get('/api/v1/search/trends?period=year', { token: probe.secret })).status).toBe(400);
    const searchOnly = await createKey(t.client, alice, { permissions: ['search'] });
    const denied = await t.client.get('/api/v1/search/trends', { token: searchOnly.secret });
    expect(denied.body.error).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', details: { required: 'analytics' } });

    // A free key's burst limit is 50 per 60 seconds: the 51st and 52nd requests are refused.
    const free = await createKey(t.client, alice, { rateLimitTier: 'free' });
    for (let i = 0; i < 50; i += 1) expect((await t.client.get('/api/v1/search/trends', { token: free.secret })).status).toBe(200);
    expect((await t.client.get('/api/v1/search/trends', { token: free.secret })).status).toBe(429);
    expect((await t.client.get('/api/v1/search/history', { token: free.secret })).status).toBe(429);
    await t.server.services.violations.drain();

    const probeUsage = (await get(`/api/v1/keys/${probe.id}/usage?days=1`, alice)).body.data.usage;
    expect(probeUsage).toMatchObject({ totalRequests: 5, successfulRequests: 3, failedRequests: 2 });
    expect(probeUsage.topEndpoints.map((e: { endpoint: string; requests: number }) => [e.endpoint, e.requests])).toEqual([
      ['GET /api/v1/search/history', 4],
      ['GET /api/v1/search/trends', 1],
    ]);
    const freeUsage = (await get(`/api/v1/keys/${free.id}/usage?days=1`, alice)).body.data.usage;
    expect(freeUsage).toMatchObject({ totalRequests: 52, successfulRequests: 50, failedRequests: 2 });
    expect((await get(`/api/v1/keys/${searchOnly.id}/usage?days=1`, alice)).body.data.usage).toMatchObject({ totalRequests: 1, failedRequests: 1 });

    clock += 301_000; // the block ends; the analytics call itself is the 53rd request
    const limits = (await t.client.get('/api/v1/rate-limit/analytics?period=hour', { token: free.secret })).body.data.analytics;
    expect(limits.summary).toMatchObject({ totalRequests: 52, limitHits: 2 });
    expect(limits.limitViolations).toEqual([expect.objectContaining({ duration: 300, affectedRequests: 2 })]);

    // 60 requests later, alice has still searched 17 times this week.
    expect((await get('/api/v1/analytics/performance', alice)).body.data.summary.totalQueries).toBe(17);
  });
});

describe('getAnalyticsDashboard', () => {
  it('when alice reads the default week, then every figure is what she searched', async () => {
    const res = await get('/api/v1/analytics/dashboard', alice);
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.trends).toEqual({
      period: 'week',
      topQueries: ['headphones', 'usb cable', 'annual report', 'zzzx', BROKEN],
      queryVolume: 17,
      avgResponseTime: 197.6, // 3,360 ms over 17 searches
      popularCategories: ['products', 'documents', 'reviews', 'notes'],
    });
    expect(data.performance).toEqual({ summary: { totalQueries: 17, averageResponseTime: 197.6, topQuery: 'headphones' }, timeSeriesData: timeSeries });
    expect(data.popularQueries).toEqual(alicePopular);
    expect(data.summary).toEqual({ period: 'week', totalQueries: 17, averageResponseTime: 197.6, topQuery: 'headphones' });
    expect(data.insights.map((i: { type: string; confidence: number; actionable: boolean }) => [i.type, i.confidence, i.actionable])).toEqual([
      ['slow_queries', 0.17, true],
      ['zero_results', 0.17, true],
      ['failed_searches', 0.17, true],
      ['growth', 0.22, true],
      ['peak_usage', 0.17, false],
      ['missing_fulltext_index', 0.17, true],
      ['missing_fulltext_index', 0.17, true],
      ['missing_fulltext_index', 0.17, true],
      ['rising_query', 0.07, false],
      ['rising_query', 0.03, false],
      ['falling_query', 0.04, false],
    ]);
    expect(data.insights[0].data).toEqual({ count: 3, share: 0.18, p95Ms: 900, queries: ['annual report', 'reviews noise'], tables: ['documents', 'reviews'] });
    expect(data.insights[3].data).toEqual({ current: 17, previous: 5, growthRate: 240 });
  });

  it('when an explicit range is given, then it overrides the period and names itself', async () => {
    const res = await get(`/api/v1/analytics/dashboard?startDate=${dayOf(13)}&endDate=${dayOf(7)}&period=year`, alice);
    expect(res.body.data.summary).toEqual({ period: `${dayOf(13)}/${dayOf(7)}`, totalQueries: 5, averageResponseTime: 76, topQuery: 'printer' });
    expect(res.body.data.performance.timeSeriesData.map((p: { query_count: number }) => p.query_count)).toEqual([0, 0, 0, 0, 4, 1, 0]);
  });
});

describe('getAnalyticsSearchTrends', () => {
  it('when the week is read, then one entry per day, the empty day included', async () => {
    const res = await get('/api/v1/analytics/search-trends', alice);
    expect(res.body.data).toEqual(aliceDays.map((d) => ({
      period: d.date, topQueries: d.topQueries, queryVolume: d.query_count, avgResponseTime: d.avg_response_time, popularCategories: d.popularCategories,
    })));
  });

  it('when a month is read, then one entry per week starting on Monday, covering both weeks of searches', async () => {
    const entries = (await get('/api/v1/analytics/search-trends?period=month', alice)).body.data as Array<{ period: string; queryVolume: number }>;
    const first = new Date(`${entries[0]!.period}T00:00:00Z`);
    expect(first.getUTCDay()).toBe(1);
    expect(first <= new Date(`${dayOf(29)}T00:00:00Z`) && new Date(first.getTime() + 7 * DAY) > new Date(`${dayOf(29)}T00:00:00Z`)).toBe(true);
    entries.forEach((entry, i) => expect(entry.period).toBe(new Date(first.getTime() + i * 7 * DAY).toISOString().slice(0, 10)));
    expect(new Date(`${entries.at(-1)!.period}T00:00:00Z`).getTime()).toBeGreaterThan(noon.getTime() - 7 * DAY);
    expect(entries.reduce((sum, entry) => sum + entry.queryVolume, 0)).toBe(22);
  });
});

describe('getAnalyticsPerformance', () => {
  it('when read, then the summary, the daily series and the ten slowest searches with the user email', async () => {
    const data = (await get('/api/v1/analytics/performance', alice)).body.data;
    expect(data.summary).toEqual({ totalQueries: 17, averageResponseTime: 197.6, peakResponseTime: 900 });
    expect(data.timeSeriesData).toEqual(timeSeries);
    const slow = (q: string, ms: number, results: number) => ({ query_text: q, execution_time_ms: ms, result_count: results, user_email: alice.email });
    expect(data.slowestQueries).toEqual([
      slow('annual report', 900, 2), slow('annual report', 700, 2), slow('reviews noise', 600, 3),
      slow('headphones', 132, 10), slow('headphones', 128, 10), slow('headphones', 127, 10), slow('headphones', 119, 10),
      slow('headphones', 113, 10), slow('wireless headphones', 110, 7), slow('headphones', 101, 10),
    ]);
  });
});

describe('getAnalyticsPopularQueries', () => {
  it('when read, then most frequent first, ties in code point order, limit honoured', async () => {
    expect((await get('/api/v1/analytics/popular-queries', alice)).body.data).toEqual(alicePopular);
    expect((await get('/api/v1/analytics/popular-queries?limit=2', alice)).body.data).toEqual(alicePopular.slice(0, 2));
    expect((await get('/api/v1/analytics/popular-queries', carol)).body.data).toEqual([]);
  });
});

describe('getAnalyticsOverview', () => {
  it('when alice reads her week, then searches and p50/p95 per day, top and zero-result queries and each database\'s share', async () => {
    const res = await get('/api/v1/analytics/overview?limit=3', alice);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ period: 'week', startDate: dayOf(6), endDate: T, totalSearches: 17 });
    // Nearest rank over each day's response times, e.g. T-2: 50 50 50 128 132 -> p50 the 3rd, p95 the 5th.
    expect(data.days).toEqual([
      { date: dayOf(6), searches: 0, p50Ms: 0, p95Ms: 0 },
      { date: dayOf(5), searches: 1, p50Ms: 40, p95Ms: 40 },
      { date: dayOf(4), searches: 2, p50Ms: 80, p95Ms: 600 },
      { date: dayOf(3), searches: 2, p50Ms: 700, p95Ms: 900 },
      { date: dayOf(2), searches: 5, p50Ms: 50, p95Ms: 132 },
      { date: dayOf(1), searches: 5, p50Ms: 113, p95Ms: 127 },
      { date: T, searches: 2, p50Ms: 30, p95Ms: 30 },
    ]);
    expect(data.topQueries).toEqual([
      { query: 'headphones', searches: 6, averageResults: 10 },
      { query: 'usb cable', searches: 3, averageResults: 4 },
      { query: 'annual report', searches: 2, averageResults: 2 },
    ]);
    // The failed search that found nothing is a failure, not a query without results.
    expect(data.zeroResultQueries).toEqual([{ query: 'zzzx', searches: 2, lastSearchedAt: at(0, 9).toISOString() }]);
    expect(data.databases).toEqual([
      { databaseId: DB.pg, name: 'Catalog', searches: 15, share: 0.8824 },
      { databaseId: DB.my, name: 'Reviews', searches: 2, share: 0.1176 },
      { databaseId: DB.lite, name: 'Notes', searches: 1, share: 0.0588 },
    ]);
  });

  it('when bob reads his, then only his searches count', async () => {
    const data = (await get('/api/v1/analytics/overview', bob)).body.data;
    expect(data.totalSearches).toBe(3);
    expect(data.zeroResultQueries.map((q: { query: string }) => q.query)).toEqual(['laptop']);
  });
});

describe('getAnalyticsInsights', () => {
  it('when read, then each rule fires on the seeded searches with its figures and the exact index statements', async () => {
    const res = await get('/api/v1/analytics/insights', alice);
    const insights = res.body.data.insights;
    expect(insights.generatedAt).toBe(new Date(clock).toISOString());
    expect(insights.analysisperiod).toBe('week');
    expect(insights.performanceInsights).toEqual([
      {
        type: 'slow_queries',
        severity: 'high',
        title: '3 searches took over 500 ms',
        description: 'p95 response time was 900 ms. Slowest queries: "annual report" (800 ms average over 2), "reviews noise" (600 ms average over 1). Tables behind them: documents (2), reviews (1).',
        impact: '17.6% of searches answered slowly.',
        recommendation: { action: recommendationsOf.slow, effort: 'low', expectedImprovement: 'Index lookups instead of bounded scans for these searches' },
        affectedQueries: ['annual report', 'reviews noise'],
      },
      expect.objectContaining({ type: 'zero_results', severity: 'medium', title: '2 searches found nothing', affectedQueries: ['zzzx'], impact: '11.8% of searches left the user without an answer.' }),
      expect.objectContaining({ type: 'failed_searches', severity: 'high', title: '2 searches failed or returned partial results', affectedQueries: [BROKEN, 'reviews noise'], recommendation: { action: recommendationsOf.failed, effort: 'low' } }),
    ]);
    expect(insights.usageInsights).toEqual([
      {
        type: 'growth',
        title: 'Search volume grew 240%',
        description: `17 searches from ${dayOf(6)} to ${T} against 5 in the 7 days before.`,
        trend: 'up',
        significance: 'high',
        implication: 'At this pace the next 7 days would bring about 58 searches.',
        recommendation: { action: recommendationsOf.growth, effort: 'low' },
      },
      {
        type: 'peak_usage',
        title: `Busiest hour: ${dayOf(1)} 10:00 UTC with 4 searches`,
        description: "The busiest hour had 4 searches, 0% of the enterprise tier's 100,000 requests per hour.",
        trend: 'up',
        significance: 'low',
        implication: 'Peak usage is well within the enterprise tier.',
      },
    ]);
    const index = (databaseId: string, table: string, searches: number, statement: string, effort: string) => ({
      type: 'missing_fulltext_index',
      databaseId,
      title: `${table} is searched without a full-text index`,
      impact: 'medium',
      details: { currentState: `Bounded scans: ${table} (${searches} search${searches === 1 ? '' : 'es'}).`, potentialImprovement: 'Index lookups with relevance ranking instead of scanning rows.', estimatedEffort: effort },
      recommendations: [{ table, action: statement, benefit: `${searches} search${searches === 1 ? '' : 'es'} in this period would use the index instead of a scan.` }],
    });
    expect(insights.optimizationInsights).toEqual([
      index(DB.pg, 'documents', 2, statements.documents, 'One CREATE INDEX per table (add CONCURRENTLY on a busy table).'),
      index(DB.lite, 'notes', 1, statements.notes, 'One FTS5 table per table, plus triggers to keep it current.'),
      index(DB.my, 'reviews', 1, statements.reviews, 'One ALTER TABLE per table.'),
    ]);
    expect(insights.trendInsights.map((i: { type: string; title: string; relatedQueries: string[]; description: string }) => [i.type, i.title, i.relatedQueries, i.description])).toEqual([
      ['rising_query', '"headphones" is rising', ['wireless headphones'], `6 searches from ${dayOf(6)} to ${T}, 1 in the 7 days before.`],
      ['rising_query', '"usb cable" is rising', [BROKEN], `3 searches from ${dayOf(6)} to ${T}, 0 in the 7 days before.`],
      ['falling_query', '"printer" is falling', [], `0 searches from ${dayOf(6)} to ${T}, 4 in the 7 days before.`],
    ]);
    expect(insights.summary).toEqual({
      keyMetrics: { totalSearches: 17, growthRate: 240, userSatisfaction: 82.4 }, // 14 of 17 found something
      topRecommendations: [recommendationsOf.slow, recommendationsOf.failed, recommendationsOf.growth],
      // round(100 - 40*2/17 - 30*3/17 - 20*2/17 - 10*4/17) = round(85.29)
      healthScore: 85,
      nextReview: new Date(clock + 7 * DAY).toISOString(),
    });
  });

  it('when includeRecommendations=false, then no recommendation is left anywhere', async () => {
    const insights = (await get('/api/v1/analytics/insights?includeRecommendations=false', alice)).body.data.insights;
    const text = JSON.stringify(insights);
    expect(text).not.toContain('"recommendation"');
    expect(text).not.toContain('"recommendations"');
    expect(insights.summary.topRecommendations).toEqual([]);
    expect(insights.optimizationInsights).toHaveLength(3);
    expect(insights.summary.healthScore).toBe(85);
  });

  it('when a user has no searches, then no finding, a healthy score and nothing to recommend', async () => {
    const insights = (await get('/api/v1/analytics/insights?period=month', carol)).body.data.insights;
    expect(insights).toMatchObject({ analysisperiod: 'month', performanceInsights: [], usageInsights: [], optimizationInsights: [], trendInsights: [] });
    expect(insights.summary).toMatchObject({ keyMetrics: { totalSearches: 0, growthRate: 0, userSatisfaction: 100 }, topRecommendations: [], healthScore: 100 });
  });
});

describe('admin views', () => {
  it('when a user who is not an admin asks, then 403 ADMIN_REQUIRED', async () => {
    for (const path of ['/api/v1/analytics/admin/system-overview', '/api/v1/analytics/admin/user-activity']) {
      const res = await get(path, alice);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('ADMIN_REQUIRED');
    }
  });

  it('when an admin reads the system overview, then everyone\'s searches, active users per day and registrations', async () => {
    const data = (await get('/api/v1/analytics/admin/system-overview', admin)).body.data;
    expect(data.period).toBe('week');
    // alice 17 searches (3,360 ms, 91 results) and bob 3 (210 ms, 17 results)
    expect(data.summary).toEqual({ active_users: 2, total_queries: 20, avg_response_time: 178.5, avg_results: 5.4 });
    expect(data.queryVolume).toEqual([
      [6, 0, 0], [5, 1, 1], [4, 2, 1], [3, 2, 1], [2, 5, 1], [1, 6, 2], [0, 4, 2],
    ].map(([d, count, users]) => ({ date: dayOf(d!), query_count: count, active_users: users })));
    const registered = await Promise.all([alice, bob, carol, admin].map(async (user) => (await get('/api/v1/auth/profile', user)).body.data.user.createdAt as string));
    const perDay = (day: string) => registered.filter((createdAt) => createdAt.slice(0, 10) === day).length;
    expect(data.userGrowth).toEqual([6, 5, 4, 3, 2, 1, 0].map((d) => ({ date: dayOf(d), new_users: perDay(dayOf(d)) })));
  });

  it('when an admin reads user activity, then every user, most searches first, then by email, paged', async () => {
    const profile = async (user: TestUser) => (await get('/api/v1/auth/profile', user)).body.data.user;
    const later = (a: string, b: Date) => (new Date(a) > b ? a : b.toISOString());
    const [a, b] = [await profile(alice), await profile(bob)];
    const idle = (await Promise.all([carol, admin].map(profile))).sort((x, y) => (x.email < y.email ? -1 : 1));
    const expected = [
      { id: alice.id, email: alice.email, name: 'Alice', role: 'user', query_count: 17, avg_response_time: 197.6, last_query: at(0, 9).toISOString(), last_active: later(a.lastActive, at(0, 9)) },
      { id: bob.id, email: bob.email, name: 'Bob', role: 'user', query_count: 3, avg_response_time: 70, last_query: at(0, 10, 30).toISOString(), last_active: later(b.lastActive, at(0, 10, 30)) },
      ...idle.map((u) => ({ id: u.id, email: u.email, name: u.name, role: u.email === adminEmail ? 'admin' : 'user', query_count: 0, avg_response_time: 0, last_query: null, last_active: u.lastActive })),
    ];
    expect((await get('/api/v1/analytics/admin/user-activity', admin)).body.data).toEqual(expected);
    expect((await get('/api/v1/analytics/admin/user-activity?limit=2&offset=1', admin)).body.data).toEqual(expected.slice(1, 3));
  });
});

describe('getSearchHistory / getSearchTrends (API key)', () => {
  it('when alice reads her history with a key, then all her searches, newest first, paged', async () => {
    const first = await t.client.get('/api/v1/search/history?limit=2', { token: aliceKey.secret });
    expect(first.body.data).toMatchObject({ total: 22, limit: 2, offset: 0 });
    expect(first.body.data.searches).toEqual([
      { id: expect.stringMatching(/^srch_/), query: 'zzzx', searchMode: 'natural', databases: [DB.pg], resultCount: 0, responseTimeMs: 30, status: 'ok', keyId: aliceKey.id, createdAt: at(0, 9).toISOString() },
      expect.objectContaining({ query: 'zzzx', createdAt: at(0, 8).toISOString() }),
    ]);
    const last = await t.client.get('/api/v1/search/history?limit=5&offset=20', { token: aliceEnterprise.secret });
    expect(last.body.data.searches.map((s: { query: string; createdAt: string }) => [s.query, s.createdAt])).toEqual([
      ['printer', at(9, 10, 10).toISOString()],
      ['printer', at(9, 10).toISOString()],
    ]);
    expect((await t.client.get('/api/v1/search/history', { token: bobKey.secret })).body.data.total).toBe(3);
  });

  it('when alice reads her trends with a key, then top queries with average results and every day of the week', async () => {
    const data = (await t.client.get('/api/v1/search/trends?limit=3', { token: aliceKey.secret })).body.data;
    expect(data).toEqual({
      period: 'week',
      totalSearches: 17,
      topQueries: [{ query: 'headphones', count: 6, averageResults: 10 }, { query: 'usb cable', count: 3, averageResults: 4 }, { query: 'annual report', count: 2, averageResults: 2 }],
      volume: aliceDays.map((d) => ({ date: d.date, count: d.query_count })),
    });
  });
});

describe('exportAnalytics', () => {
  const download = async (query: string, user = alice) => {
    const response = await fetch(`${t.server.url}/api/v1/analytics/export?${query}`, { headers: { authorization: `Bearer ${user.token}` } });
    return { response, body: Buffer.from(await response.arrayBuffer()) };
  };

  it('when an enterprise user exports CSV, then every search of the range, oldest first, quoted where needed', async () => {
    const { response, body } = await download('format=csv');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="quarry-analytics-${T}.csv"`);
    const quote = (q: string) => (q.includes(',') ? `"${q.replace(/"/g, '""')}"` : q);
    const lines = aliceWeek.map((s) => [quote(s.q), 'natural', s.results, s.ms, s.status ?? 'ok', s.when.toISOString()].join(','));
    expect(body.toString('utf8')).toBe(['query,searchMode,resultCount,responseTimeMs,status,createdAt', ...lines].join('\r\n') + '\r\n');
    expect(lines[1]).toBe(`"broken ""cable"", 2m",natural,0,80,error,${at(4, 12).toISOString()}`);
  });

  it('when JSON is asked with chosen metrics, per row or per day, then exactly those columns', async () => {
    const raw = await download('format=json&metrics=query,resultCount');
    expect(raw.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(raw.response.headers.get('content-disposition')).toBe(`attachment; filename="quarry-analytics-${T}.json"`);
    expect(JSON.parse(raw.body.toString('utf8'))).toEqual(aliceWeek.map((s) => ({ query: s.q, resultCount: s.results })));
    const daily = await download('format=json&granularity=day&metrics=searches,averageResponseTimeMs,failedSearches');
    expect(JSON.parse(daily.body.toString('utf8'))).toEqual(aliceDays.map((d) => ({
      bucket: d.date, searches: d.query_count, averageResponseTimeMs: d.avg_response_time, failedSearches: d.date === dayOf(4) ? 2 : 0,
    })));
  });

  it('when XLSX is asked, then a workbook exceljs reads back with a header row and one row per search', async () => {
    const { response, body } = await download('format=xlsx&metrics=query,responseTimeMs,createdAt');
    expect(response.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="quarry-analytics-${T}.xlsx"`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(body as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('analytics')!;
    expect(sheet.rowCount).toBe(1 + aliceWeek.length);
    expect((sheet.getRow(1).values as unknown[]).slice(1)).toEqual(['query', 'responseTimeMs', 'createdAt']);
    aliceWeek.forEach((s, i) => {
      const [query, ms, createdAt] = (sheet.getRow(i + 2).values as unknown[]).slice(1);
      expect([query, ms, (createdAt as Date).toISOString()]).toEqual([s.q, s.ms, s.when.toISOString()]);
    });
  });

  it('when an export spans many batches, with equal timestamps at the edges, then every row comes once, in order', async () => {
    const dave = await registerUser(t.client, { name: 'Dave' });
    const same = at(2, 8);
    for (let i = 0; i < 7; i += 1) {
      t.server.services.searchRecorder.record({
        userId: dave.id, keyId: null, query: `q${i}`, searchMode: 'natural', databases: [], tables: null,
        resultCount: i, responseTimeMs: 10, status: 'ok', unindexedTables: null, createdAt: i < 5 ? same : at(1, 8, i),
      });
    }
    await t.server.services.searchRecorder.flush();
    const seen: string[] = [];
    for await (const batch of searchRecordRepository.iterate({ userId: dave.id, from: at(6, 0), to: at(-1, 0) }, 2)) {
      expect(batch.length).toBeLessThanOrEqual(2);
      seen.push(...batch.map((row) => row.query));
    }
    expect(seen.slice(5)).toEqual(['q5', 'q6']);
    expect([...seen].sort()).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6']);
  });

  it('when a free-tier user exports, then 403 FEATURE_NOT_IN_TIER naming the tier, with the upgrade link', async () => {
    const res = await get('/api/v1/analytics/export?format=csv', bob);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({
      code: 'FEATURE_NOT_IN_TIER',
      message: 'Analytics exports are part of the enterprise tier; your tier is free.',
      details: { tier: 'free', requiredTier: 'enterprise', upgradeUrl: 'https://quarry.example.com/pricing' },
    });
    expect((await get('/api/v1/analytics/export', carol)).body.error.details.tier).toBe('free'); // no key at all
  });

  it.each([
    ['metrics=query,nope', /unknown column\(s\) "nope"/],
    ['granularity=day&metrics=query', /unknown column\(s\) "query"/],
    ['metrics=,', /at least one column/],
  ])('when %s, then 400 VALIDATION_ERROR on /metrics', async (query, message) => {
    const res = await get(`/api/v1/analytics/export?${query}`, alice);
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors).toEqual([{ location: 'query', path: '/metrics', message: expect.stringMatching(message) }]);
  });
});

describe('date parameters', () => {
  it.each([
    [`startDate=${dayOf(3)}&endDate=${dayOf(5)}`, '/endDate', `must not be before startDate (${dayOf(3)})`],
    [`startDate=${dayOf(366)}&endDate=${T}`, '/startDate', 'must be at most 366 days before endDate (the range spans 367 days)'],
    [`endDate=${dayOf(-1)}`, '/endDate', `is in the future (today is ${T}, UTC)`],
    [`startDate=${dayOf(-2)}`, '/startDate', `is in the future (today is ${T}, UTC)`],
  ])('when %s, then 400 VALIDATION_ERROR naming %s', async (query, path, message) => {
    for (const endpoint of ['dashboard', 'performance', 'admin/system-overview']) {
      const res = await get(`/api/v1/analytics/${endpoint}?${query}`, admin);
      expect(res.status, endpoint).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { errors: [{ location: 'query', path, message }] } });
    }
  });

  it('when a date is not a calendar day or the period is unknown, then 400 from the contract', async () => {
    expect((await get('/api/v1/analytics/dashboard?startDate=2026-02-30', alice)).body.error.details.errors[0]).toMatchObject({ location: 'query', path: '/startDate' });
    expect((await get('/api/v1/analytics/dashboard?period=decade', alice)).body.error.details.errors[0]).toMatchObject({ location: 'query', path: '/period' });
  });

  it('when the range is exactly 366 days, then it is accepted, one point per month', async () => {
    const res = await get(`/api/v1/analytics/performance?startDate=${dayOf(365)}&endDate=${T}`, alice);
    expect(res.status).toBe(200);
    expect(res.body.data.summary.totalQueries).toBe(22);
    expect(res.body.data.timeSeriesData[0].date).toBe(`${dayOf(365).slice(0, 7)}-01`);
  });
});

describe('roll-ups', () => {
  it('when rebuilt from the raw rows, then identical to the ones kept up at write time', async () => {
    const sequelize = SearchRecordModel.sequelize!;
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of Object.values(rollupTables)) {
        const [rows] = await sequelize.query(`SELECT * FROM ${table.name} ORDER BY ${table.keys.join(', ')}`);
        out[table.name] = (rows as Array<Record<string, unknown>>).map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : String(v)])));
      }
      return out;
    };
    await t.server.services.searchRecorder.flush();
    const written = await snapshot();
    expect(written.search_stats_hourly!.length).toBeGreaterThan(10);
    await rebuildRollups(sequelize);
    expect(await snapshot()).toEqual(written);
  });
});

describe('retention', () => {
  it('when records are older than ANALYTICS_RETENTION_DAYS, then the job deletes them and nothing newer', async () => {
    const old = new Date(clock - 396 * DAY);
    t.server.services.searchRecorder.record({
      userId: alice.id, keyId: aliceKey.id, query: 'ancient', searchMode: 'natural', databases: [], tables: null,
      resultCount: 1, responseTimeMs: 5, status: 'ok', unindexedTables: null, createdAt: old,
    });
    t.server.services.usage.record({ keyId: aliceKey.id, userId: alice.id, endpoint: 'GET /api/v1/search/history', status: 200, durationMs: 1, rateLimited: false, counted: true, at: old.getTime() });
    await t.flush();
    expect((await t.client.get('/api/v1/search/history', { token: aliceKey.secret })).body.data.total).toBe(23);
    // its hour, its query's day and its latency bucket go with it
    expect(await t.server.services.retention.run()).toEqual({ searchRecords: 1, searchRollups: 3, requestUsage: 1 });
    expect((await t.client.get('/api/v1/search/history', { token: aliceKey.secret })).body.data.total).toBe(22);
    expect(await t.server.services.retention.run()).toEqual({ searchRecords: 0, searchRollups: 0, requestUsage: 0 });
  });
});
