import type { components, operations } from '../../../generated/openapi.js';
import type { SearchStatsRepository } from '../../repositories/search-stats-repository.js';
import type { UserRecord, UserRepository } from '../../repositories/user-repository.js';
import { resolveRange, round1, type RangeQuery } from '../../rules/analytics-range.js';
import { fillBuckets } from './analytics-service.js';

type Overview = components['schemas']['SystemOverviewResponse']['data'];
type UserActivity = components['schemas']['UserActivityResponse']['data'];
type ActivityQuery = NonNullable<operations['getAdminUserActivity']['parameters']['query']>;

export interface AdminAnalyticsDeps {
  stats: Pick<SearchStatsRepository, 'totals' | 'byBucket' | 'userActivity'>;
  users: Pick<UserRepository, 'registrationsByBucket'>;
  roleOf(user: Pick<UserRecord, 'email' | 'role'>): 'user' | 'admin';
  flushPending(): Promise<void>;
  now(): number;
}

/**
 * The admin views of the Analytics tag, across every user (the contract's `x-quarry-admin` keeps others out).
 * An active user is one who searched in the range.
 */
export class AdminAnalyticsService {
  constructor(private readonly deps: AdminAnalyticsDeps) {}

  /** getAdminSystemOverview */
  async systemOverview(query: RangeQuery): Promise<Overview> {
    const range = resolveRange(query, new Date(this.deps.now()));
    await this.deps.flushPending();
    const filter = { userId: null, from: range.from, to: range.to };
    const [totals, buckets, registrations] = await Promise.all([
      this.deps.stats.totals(filter),
      this.deps.stats.byBucket(filter, range.unit),
      this.deps.users.registrationsByBucket(range.from, range.to, range.unit),
    ]);
    const joined = new Map(registrations.map((row) => [row.bucket, row.users]));
    const series = fillBuckets(range, range.unit, buckets);
    return {
      summary: {
        active_users: totals.activeUsers,
        total_queries: totals.searches,
        avg_response_time: round1(totals.averageMs),
        avg_results: round1(totals.averageResults),
      },
      userGrowth: series.map(({ bucket }) => ({ date: bucket, new_users: joined.get(bucket) ?? 0 })),
      queryVolume: series.map(({ bucket, stats }) => ({ date: bucket, query_count: stats?.searches ?? 0, active_users: stats?.activeUsers ?? 0 })),
      period: range.label,
    };
  }

  /**
   * getAdminUserActivity: every user, most searches in the range first, then by email. last_query is the last
   * search in the range; last_active the later of the last sign-in and that search.
   */
  async userActivity(query: ActivityQuery): Promise<UserActivity> {
    const range = resolveRange(query, new Date(this.deps.now()));
    await this.deps.flushPending();
    const rows = await this.deps.stats.userActivity({ userId: null, from: range.from, to: range.to }, query.limit ?? 100, query.offset ?? 0);
    return rows.map((row) => {
      const lastActive = row.lastQueryAt && row.lastQueryAt > row.lastActiveAt ? row.lastQueryAt : row.lastActiveAt;
      return {
        id: row.id,
        email: row.email,
        name: row.name,
        role: this.deps.roleOf(row),
        query_count: row.queryCount,
        avg_response_time: round1(row.averageMs),
        last_query: row.lastQueryAt?.toISOString() ?? null,
        last_active: lastActive.toISOString(),
      };
    });
  }
}
