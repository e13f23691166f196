import type { components, operations } from '../../../generated/openapi.js';
import type { SearchRecordRepository } from '../../repositories/search-record-repository.js';
import type { SearchStatsRepository } from '../../repositories/search-stats-repository.js';
import { bucketRange } from '../../repositories/time-buckets.js';
import { resolveRange, round1 } from '../../rules/analytics-range.js';
import type { KeyCaller } from '../callers.js';
import type { HistoryCache } from './history-cache.js';

export type History = components['schemas']['SearchHistoryResponse']['data'];
type Trends = components['schemas']['SearchTrendsResponse']['data'];
type HistoryQuery = NonNullable<operations['getSearchHistory']['parameters']['query']>;
type TrendsQuery = NonNullable<operations['getSearchTrends']['parameters']['query']>;

export interface SearchHistoryDeps {
  records: Pick<SearchRecordRepository, 'page'>;
  stats: Pick<SearchStatsRepository, 'totals' | 'topQueries' | 'byBucket'>;
  flushPending(): Promise<void>;
  now(): number;
  /** Pages already read, per user, until that user's searches change. */
  cache?: HistoryCache<History>;
}

/** getSearchHistory / getSearchTrends: the key owner's searches (made with any of their keys), read with a key. */
export class SearchHistoryService {
  constructor(private readonly deps: SearchHistoryDeps) {}

  async history(caller: KeyCaller, query: HistoryQuery): Promise<History> {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const { cache } = this.deps;
    const page = `${limit}:${offset}`;
    const cached = cache?.get(caller.user.id, page);
    if (cached) return cached;
    await this.deps.flushPending();
    const readAt = cache?.clock() ?? 0;
    const { rows, total } = await this.deps.records.page(caller.user.id, limit, offset);
    const history: History = {
      total,
      limit,
      offset,
      searches: rows.map((row) => ({
        id: row.id,
        query: row.query,
        searchMode: row.searchMode,
        databases: row.databases,
        resultCount: row.resultCount,
        responseTimeMs: row.responseTimeMs,
        status: row.status,
        keyId: row.keyId,
        createdAt: row.createdAt.toISOString(),
      })),
    };
    cache?.set(caller.user.id, page, history, readAt);
    return history;
  }

  /** The period (day, week or month, as in the analytics ranges) ending today; volume per day. */
  async trends(caller: KeyCaller, query: TrendsQuery): Promise<Trends> {
    const period = query.period ?? 'week';
    const range = resolveRange({ period }, new Date(this.deps.now()));
    await this.deps.flushPending();
    const filter = { userId: caller.user.id, from: range.from, to: range.to };
    const [totals, top, days] = await Promise.all([
      this.deps.stats.totals(filter),
      this.deps.stats.topQueries(filter, query.limit ?? 10),
      this.deps.stats.byBucket(filter, 'day'),
    ]);
    const perDay = new Map(days.map((row) => [row.bucket, row.searches]));
    return {
      period,
      totalSearches: totals.searches,
      topQueries: top.map((q) => ({ query: q.query, count: q.count, averageResults: round1(q.averageResults) })),
      volume: bucketRange(range.from, new Date(range.to.getTime() - 1), 'day').map((date) => ({ date, count: perDay.get(date) ?? 0 })),
    };
  }
}
