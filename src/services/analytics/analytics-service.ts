import type { components } from '../../../generated/openapi.js';
import { TIERS } from '../../rate-limit/tiers.js';
import type { DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { SearchFilter } from '../../repositories/search-record-repository.js';
import type { BucketStats, QueryStats, SearchStatsRepository } from '../../repositories/search-stats-repository.js';
import { bucketRange } from '../../repositories/time-buckets.js';
import { resolveRange, round1, type AnalyticsRange, type RangeQuery } from '../../rules/analytics-range.js';
import type { UserCaller } from '../callers.js';
import type { PlanService } from '../accounts/plan-service.js';
import { findCachedTable } from '../../sql-search/fulltext-statements.js';
import { buildInsights, type InsightFacts, type UnindexedDatabaseFacts } from './insights.js';

type Schemas = components['schemas'];
type Dashboard = Schemas['DashboardResponse']['data'];
type TrendEntry = Schemas['TrendEntry'];
type TimeSeriesPoint = Schemas['TimeSeriesPoint'];
type PopularQuery = Schemas['PopularQuery'];
type Performance = Schemas['PerformanceResponse']['data'];
type Insights = Schemas['Insights'];
type Overview = Schemas['AnalyticsOverviewResponse']['data'];

/** How many entries the lists of one answer carry. */
const TOP = { queries: 5, categories: 5, popular: 20, slowest: 10, insightQueries: 5, trendPool: 50 };

export interface AnalyticsDeps {
  stats: SearchStatsRepository;
  connections: Pick<DatabaseConnectionRepository, 'findOwned'>;
  plans: Pick<PlanService, 'planOf'>;
  /** Writes buffered search records, so a figure includes the caller's latest searches. */
  flushPending(): Promise<void>;
  now(): number;
}

/** Every bucket of the range, empty ones included, with the rows that have searches. */
export function fillBuckets(range: Pick<AnalyticsRange, 'from' | 'to'>, unit: AnalyticsRange['unit'] | 'hour', rows: BucketStats[]): Array<{ bucket: string; stats: BucketStats | null }> {
  const byBucket = new Map(rows.map((row) => [row.bucket, row]));
  return bucketRange(range.from, new Date(range.to.getTime() - 1), unit).map((bucket) => ({ bucket, stats: byBucket.get(bucket) ?? null }));
}

export function timeSeries(range: AnalyticsRange, rows: BucketStats[]): TimeSeriesPoint[] {
  return fillBuckets(range, range.unit, rows).map(({ bucket, stats }) => ({
    date: bucket,
    query_count: stats?.searches ?? 0,
    avg_response_time: round1(stats?.averageMs ?? 0),
  }));
}

const popular = (q: QueryStats): PopularQuery => ({
  query_text: q.query,
  frequency: q.count,
  avg_time: round1(q.averageMs),
  avg_results: round1(q.averageResults),
  last_used: q.lastAt.toISOString(),
});

/** The caller's analytics (Analytics tag, JWT): computed from their recorded searches, never canned. */
export class AnalyticsService {
  constructor(private readonly deps: AnalyticsDeps) {}

  /** getAnalyticsDashboard */
  async dashboard(caller: UserCaller, query: RangeQuery): Promise<Dashboard> {
    const { range, filter } = await this.prepare(caller, query);
    const [facts, buckets] = await Promise.all([this.facts(caller, range, filter), this.deps.stats.byBucket(filter, range.unit)]);
    const { totals } = facts;
    const topQueries = facts.topQueryStats;
    const summary = { totalQueries: totals.searches, averageResponseTime: round1(totals.averageMs), topQuery: topQueries[0]?.query ?? null };
    return {
      trends: {
        period: range.label,
        topQueries: topQueries.slice(0, TOP.queries).map((q) => q.query),
        queryVolume: totals.searches,
        avgResponseTime: round1(totals.averageMs),
        popularCategories: facts.topTables.slice(0, TOP.categories).map((t) => t.table),
      },
      performance: { summary, timeSeriesData: timeSeries(range, buckets) },
      popularQueries: topQueries.slice(0, TOP.popular).map(popular),
      insights: buildInsights(facts, true).flat,
      summary: { period: range.label, ...summary },
    };
  }

  /** getAnalyticsSearchTrends: one entry per bucket of the range, empty buckets included. */
  async searchTrends(caller: UserCaller, query: RangeQuery): Promise<TrendEntry[]> {
    const { range, filter } = await this.prepare(caller, query);
    const [buckets, queries, tables] = await Promise.all([
      this.deps.stats.byBucket(filter, range.unit),
      this.deps.stats.topQueriesPerBucket(filter, range.unit, TOP.queries),
      this.deps.stats.tableCountsPerBucket(filter, range.unit),
    ]);
    return fillBuckets(range, range.unit, buckets).map(({ bucket, stats }) => ({
      period: bucket,
      topQueries: queries.get(bucket) ?? [],
      queryVolume: stats?.searches ?? 0,
      avgResponseTime: round1(stats?.averageMs ?? 0),
      popularCategories: (tables.get(bucket) ?? []).slice(0, TOP.categories).map((t) => t.table),
    }));
  }

  /** getAnalyticsPerformance */
  async performance(caller: UserCaller, query: RangeQuery): Promise<Performance> {
    const { range, filter } = await this.prepare(caller, query);
    const [totals, buckets, slowest] = await Promise.all([
      this.deps.stats.totals(filter),
      this.deps.stats.byBucket(filter, range.unit),
      this.deps.stats.slowest({ ...filter, userId: caller.user.id }, TOP.slowest),
    ]);
    return {
      summary: { totalQueries: totals.searches, averageResponseTime: round1(totals.averageMs), peakResponseTime: totals.maxMs },
      timeSeriesData: timeSeries(range, buckets),
      slowestQueries: slowest.map((row) => ({ query_text: row.query, execution_time_ms: row.responseTimeMs, result_count: row.resultCount, user_email: row.email })),
    };
  }

  /** getAnalyticsPopularQueries: most frequent first, ties by query text. */
  async popularQueries(caller: UserCaller, query: RangeQuery & { limit?: number }): Promise<PopularQuery[]> {
    const { filter } = await this.prepare(caller, query);
    return (await this.deps.stats.topQueries(filter, query.limit ?? TOP.popular)).map(popular);
  }

  /** getAnalyticsOverview: what the console's charts draw, per UTC day of the range. */
  async overview(caller: UserCaller, query: RangeQuery & { limit?: number }): Promise<Overview> {
    const { range, filter } = await this.prepare(caller, query);
    const limit = query.limit ?? 10;
    const stats = this.deps.stats;
    const [totals, buckets, percentiles, top, zero, databases] = await Promise.all([
      stats.totals(filter), stats.byBucket(filter, 'day'), stats.dailyPercentiles(filter, [50, 95]),
      stats.topQueries(filter, limit), stats.zeroResultQueries(filter, limit), stats.databaseCounts(filter),
    ]);
    const names = new Map(await Promise.all(databases.slice(0, limit).map(async (d) => [d.databaseId, (await this.deps.connections.findOwned(caller.user.id, d.databaseId))?.name ?? null] as const)));
    return {
      period: range.label,
      startDate: range.startDate,
      endDate: range.endDate,
      totalSearches: totals.searches,
      days: fillBuckets(range, 'day', buckets).map(({ bucket, stats: day }) => {
        const [p50Ms, p95Ms] = percentiles.get(bucket) ?? [0, 0];
        return { date: bucket, searches: day?.searches ?? 0, p50Ms: p50Ms!, p95Ms: p95Ms! };
      }),
      topQueries: top.map((q) => ({ query: q.query, searches: q.count, averageResults: round1(q.averageResults) })),
      zeroResultQueries: zero.map((q) => ({ query: q.query, searches: q.count, lastSearchedAt: q.lastAt.toISOString() })),
      databases: databases.slice(0, limit).map((d) => ({
        databaseId: d.databaseId, name: names.get(d.databaseId) ?? null, searches: d.count,
        share: totals.searches === 0 ? 0 : Math.min(1, Math.round((d.count / totals.searches) * 10_000) / 10_000),
      })),
    };
  }

  /** getAnalyticsInsights */
  async insights(caller: UserCaller, query: RangeQuery, includeRecommendations: boolean): Promise<{ insights: Insights }> {
    const { range, filter } = await this.prepare(caller, query);
    return { insights: buildInsights(await this.facts(caller, range, filter), includeRecommendations).insights };
  }

  private async prepare(caller: UserCaller, query: RangeQuery): Promise<{ range: AnalyticsRange; filter: SearchFilter }> {
    const range = resolveRange(query, new Date(this.deps.now()));
    await this.deps.flushPending();
    return { range, filter: { userId: caller.user.id, from: range.from, to: range.to } };
  }

  /** Everything the insight rules read (insights.ts), gathered in parallel where the store allows. */
  private async facts(caller: UserCaller, range: AnalyticsRange, filter: SearchFilter): Promise<InsightFacts & { topQueryStats: QueryStats[] }> {
    const stats = this.deps.stats;
    const previous: SearchFilter = { userId: filter.userId, from: range.previous.from, to: range.previous.to };
    const [totals, previousTotals, queries, topTables, unindexed, peakHour, tierName] = await Promise.all([
      stats.totals(filter),
      stats.totals(previous),
      stats.queryFacts(filter, range.previous.from, TOP.trendPool, TOP.insightQueries),
      stats.tableCounts(filter),
      this.unindexed(caller, filter),
      stats.peakHour(filter),
      this.deps.plans.planOf(caller.user.id),
    ]);
    const [p95Ms, slowTables] = await Promise.all([
      totals.searches > 0 ? stats.responseTimePercentile(filter, 95) : Promise.resolve(0),
      totals.slow > 0 ? stats.tableCounts(filter, 'slow') : Promise.resolve([]),
    ]);
    return {
      now: new Date(this.deps.now()),
      range,
      totals,
      p95Ms,
      previousSearches: previousTotals.searches,
      slowQueries: queries.slow,
      slowTables,
      zeroQueries: queries.zero,
      failedQueries: queries.failed,
      topTables,
      unindexed,
      peakHour,
      tier: { name: tierName, requestsPerHour: TIERS[tierName].requestsPerHour },
      queryShifts: queries.shifts,
      topQueries: queries.top.map((q) => q.query),
      topQueryStats: queries.top,
    };
  }

  /** Unindexed tables grouped per connection of the caller, with its engine and cached schema. */
  private async unindexed(caller: UserCaller, filter: SearchFilter): Promise<UnindexedDatabaseFacts[]> {
    const counts = await this.deps.stats.unindexedCounts(filter);
    const databaseIds = [...new Set(counts.map((c) => c.databaseId))];
    const connections = await Promise.all(databaseIds.map((id) => this.deps.connections.findOwned(caller.user.id, id)));
    // A connection deleted since (or never the caller's) has no engine to write a statement for: skipped.
    return connections.flatMap((connection) => {
      if (!connection) return [];
      const tables = counts
        .filter((c) => c.databaseId === connection.id)
        .map((c) => ({ table: c.table, searches: c.count, schema: findCachedTable(connection.schemaCache ?? null, c.table) }));
      return [{ databaseId: connection.id, engine: connection.engine, tables }];
    });
  }
}
