import { SearchRecordModel } from '../models/index.js';
import type { SearchFilter, UnindexedTable } from './search-record-repository.js';
import { jsonElements } from './search-rollups.js';
import { num, select, textOrder, toDate } from './sql-helpers.js';
import { bucketExpression, type BucketUnit } from './time-buckets.js';

export interface SearchTotals {
  searches: number;
  averageMs: number;
  maxMs: number;
  averageResults: number;
  /** Status ok with no results (failed searches are counted apart). */
  zeroResults: number;
  withResults: number;
  /** Slower than SLOW_SEARCH_MS. */
  slow: number;
  /** Status partial or error. */
  failed: number;
  /** Searches that read at least one table without a full-text index. */
  unindexed: number;
  activeUsers: number;
}

export interface BucketStats {
  bucket: string;
  searches: number;
  averageMs: number;
  maxMs: number;
  averageResults: number;
  zeroResults: number;
  failed: number;
  activeUsers: number;
}

export interface QueryStats {
  query: string;
  count: number;
  averageMs: number;
  averageResults: number;
  lastAt: Date;
}

/** Per-query facts of a range against the one before it (queryFacts). */
export interface QueryFacts {
  /** Most searched in the range, with average time and results over all its searches. */
  top: QueryStats[];
  /** Most searched in the previous range (count = searches there). */
  previousTop: QueryStats[];
  /** Most slow searches (count = slow searches, averageMs over those). */
  slow: QueryStats[];
  zero: QueryStats[];
  failed: QueryStats[];
  /** Searches in both ranges, for every query in `top` or `previousTop`. */
  shifts: Array<{ query: string; current: number; previous: number }>;
}

const sequelize = () => SearchRecordModel.sequelize!;

/** Rows of a roll-up in the filter's range: its bucket column (`hour_start` or `day_start`) from `from` to `to`. */
function within(filter: SearchFilter, unit: 'hour' | 'day', alias = ''): string {
  const column = `${unit}_start`;
  const a = alias ? `${alias}.` : '';
  return [`${a}${column} >= :from`, `${a}${column} < :to`, ...(filter.userId ? [`${a}user_id = :userId`] : [])].join(' AND ');
}

const params = (filter: SearchFilter, extra: Record<string, unknown> = {}) => ({ from: filter.from, to: filter.to, userId: filter.userId, ...extra });
const bucketOf = (column: 'hour' | 'day', unit: BucketUnit) => bucketExpression(sequelize(), `${column}_start`, unit).val as string;
const ratio = (sum: unknown, count: unknown) => (num(count) === 0 ? 0 : num(sum) / num(count));


/**
 * Aggregates of searches, read from the roll-ups (search-rollups.ts), exact for ranges of whole UTC days. The SQL
 * runs alike on both dialects: time buckets from time-buckets.ts, ties broken in code point order (textOrder).
 */
export const searchStatsRepository = {
  async totals(filter: SearchFilter): Promise<SearchTotals> {
    const [row] = await select(sequelize(), `
      SELECT SUM(searches) AS searches, SUM(total_ms) AS total_ms, MAX(max_ms) AS max_ms, SUM(total_results) AS total_results,
        SUM(zero_results) AS zero_results, SUM(with_results) AS with_results, SUM(slow) AS slow, SUM(failed) AS failed,
        SUM(unindexed) AS unindexed, COUNT(DISTINCT user_id) AS active_users
      FROM search_stats_hourly WHERE ${within(filter, 'hour')}`, params(filter));
    return {
      searches: num(row?.searches),
      averageMs: ratio(row?.total_ms, row?.searches),
      maxMs: num(row?.max_ms),
      averageResults: ratio(row?.total_results, row?.searches),
      zeroResults: num(row?.zero_results),
      withResults: num(row?.with_results),
      slow: num(row?.slow),
      failed: num(row?.failed),
      unindexed: num(row?.unindexed),
      activeUsers: num(row?.active_users),
    };
  },

  /** Only buckets that have searches; callers fill the empty ones (bucketRange). */
  async byBucket(filter: SearchFilter, unit: BucketUnit): Promise<BucketStats[]> {
    const rows = await select(sequelize(), `
      SELECT ${bucketOf('hour', unit)} AS bucket, SUM(searches) AS searches, SUM(total_ms) AS total_ms, MAX(max_ms) AS max_ms,
        SUM(total_results) AS total_results, SUM(zero_results) AS zero_results, SUM(failed) AS failed, COUNT(DISTINCT user_id) AS active_users
      FROM search_stats_hourly WHERE ${within(filter, 'hour')} GROUP BY 1 ORDER BY 1`, params(filter));
    return rows.map((row) => ({
      bucket: String(row.bucket),
      searches: num(row.searches),
      averageMs: ratio(row.total_ms, row.searches),
      maxMs: num(row.max_ms),
      averageResults: ratio(row.total_results, row.searches),
      zeroResults: num(row.zero_results),
      failed: num(row.failed),
      activeUsers: num(row.active_users),
    }));
  },

  /** The busiest hour (ties: the earliest), or null without searches. */
  async peakHour(filter: SearchFilter): Promise<{ bucket: string; searches: number } | null> {
    const [row] = await select(sequelize(), `
      SELECT ${bucketOf('hour', 'hour')} AS bucket, SUM(searches) AS searches FROM search_stats_hourly WHERE ${within(filter, 'hour')}
      GROUP BY 1 ORDER BY 2 DESC, 1 ASC LIMIT 1`, params(filter));
    return row ? { bucket: String(row.bucket), searches: num(row.searches) } : null;
  },

  /** Most frequent queries, most frequent first, ties by query text. */
  async topQueries(filter: SearchFilter, limit: number): Promise<QueryStats[]> {
    const rows = await select(sequelize(), `
      SELECT query, SUM(searches) AS count, SUM(total_ms) AS total_ms, SUM(total_results) AS total_results, MAX(last_at) AS last_at
      FROM search_query_stats_daily WHERE ${within(filter, 'day')}
      GROUP BY query ORDER BY 2 DESC, ${textOrder(sequelize(), 'query')} ASC LIMIT :limit`, params(filter, { limit }));
    return rows.map((row) => ({
      query: String(row.query),
      count: num(row.count),
      averageMs: ratio(row.total_ms, row.count),
      averageResults: ratio(row.total_results, row.count),
      lastAt: toDate(row.last_at)!,
    }));
  },

  /**
   * Everything the insights need about queries, in one pass over a range and the one before it (`previousFrom`
   * up to `filter.from`): the `top` most frequent of each range with exact counts in both, and the `few` with most
   * slow, zero-result and failed searches. Window functions rank the grouped queries, so the answer stays small.
   */
  async queryFacts(filter: SearchFilter, previousFrom: Date, top: number, few: number): Promise<QueryFacts> {
    const c = textOrder(sequelize(), 'query');
    const current = (column: string) => `SUM(CASE WHEN day_start >= :from THEN ${column} ELSE 0 END)`;
    const rank = (column: string) => `ROW_NUMBER() OVER (ORDER BY ${column} DESC, ${c} ASC)`;
    const rows = await select(sequelize(), `
      WITH grouped AS (
        SELECT query, ${current('searches')} AS cur, SUM(CASE WHEN day_start < :from THEN searches ELSE 0 END) AS prev,
          ${current('total_ms')} AS total_ms, ${current('total_results')} AS total_results, ${current('slow')} AS slow,
          ${current('slow_ms')} AS slow_ms, ${current('zero_results')} AS zero, ${current('failed')} AS failed,
          MAX(CASE WHEN day_start >= :from THEN last_at END) AS last_at
        FROM search_query_stats_daily
        WHERE day_start >= :previousFrom AND day_start < :to ${filter.userId ? 'AND user_id = :userId' : ''}
        GROUP BY query
      ), ranked AS (
        SELECT grouped.*, ${rank('cur')} AS rn_cur, ${rank('prev')} AS rn_prev, ${rank('slow')} AS rn_slow,
          ${rank('zero')} AS rn_zero, ${rank('failed')} AS rn_failed
        FROM grouped
      )
      SELECT * FROM ranked
      WHERE (cur > 0 AND rn_cur <= :top) OR (prev > 0 AND rn_prev <= :top)
        OR (slow > 0 AND rn_slow <= :few) OR (zero > 0 AND rn_zero <= :few) OR (failed > 0 AND rn_failed <= :few)`,
      params(filter, { previousFrom, top, few }));
    const list = (rank: string, count: string, ms: string | null, limit: number) => rows
      .filter((row) => num(row[count]) > 0 && num(row[rank]) <= limit)
      .sort((a, b) => num(a[rank]) - num(b[rank]))
      .map((row) => ({
        query: String(row.query),
        count: num(row[count]),
        averageMs: ms ? ratio(row[ms], row[count]) : 0,
        averageResults: ratio(row.total_results, row.cur),
        lastAt: toDate(row.last_at) ?? new Date(0),
      }));
    return {
      top: list('rn_cur', 'cur', 'total_ms', top),
      previousTop: list('rn_prev', 'prev', null, top),
      slow: list('rn_slow', 'slow', 'slow_ms', few),
      zero: list('rn_zero', 'zero', null, few),
      failed: list('rn_failed', 'failed', null, few),
      shifts: rows.filter((row) => (num(row.cur) > 0 && num(row.rn_cur) <= top) || (num(row.prev) > 0 && num(row.rn_prev) <= top))
        .map((row) => ({ query: String(row.query), current: num(row.cur), previous: num(row.prev) })),
    };
  },

  /** The `perBucket` most frequent queries of every day, week or month bucket (one window-function pass). */
  async topQueriesPerBucket(filter: SearchFilter, unit: 'day' | 'week' | 'month', perBucket: number): Promise<Map<string, string[]>> {
    const rows = await select(sequelize(), `
      SELECT bucket, query FROM (
        SELECT bucket, query, ROW_NUMBER() OVER (PARTITION BY bucket ORDER BY count DESC, ${textOrder(sequelize(), 'query')} ASC) AS rn
        FROM (SELECT ${bucketOf('day', unit)} AS bucket, query, SUM(searches) AS count FROM search_query_stats_daily
              WHERE ${within(filter, 'day')} GROUP BY 1, 2) grouped
      ) ranked WHERE rn <= :perBucket ORDER BY bucket, rn`, params(filter, { perBucket }));
    const out = new Map<string, string[]>();
    for (const row of rows) out.set(String(row.bucket), [...(out.get(String(row.bucket)) ?? []), String(row.query)]);
    return out;
  },

  /** Searches per table name (the "categories"), most searched first, ties by name; `slow` counts slow searches. */
  async tableCounts(filter: SearchFilter, subset: 'all' | 'slow' = 'all'): Promise<Array<{ table: string; count: number }>> {
    const count = subset === 'slow' ? 'slow' : 'searches';
    const rows = await select(sequelize(), `
      SELECT table_name, SUM(${count}) AS count FROM search_table_stats_daily WHERE ${within(filter, 'day')} AND kind = 'searched'
      GROUP BY table_name HAVING SUM(${count}) > 0 ORDER BY 2 DESC, ${textOrder(sequelize(), 'table_name')} ASC`, params(filter));
    return rows.map((row) => ({ table: String(row.table_name), count: num(row.count) }));
  },

  async tableCountsPerBucket(filter: SearchFilter, unit: 'day' | 'week' | 'month'): Promise<Map<string, Array<{ table: string; count: number }>>> {
    const rows = await select(sequelize(), `
      SELECT ${bucketOf('day', unit)} AS bucket, table_name, SUM(searches) AS count FROM search_table_stats_daily
      WHERE ${within(filter, 'day')} AND kind = 'searched' GROUP BY 1, 2 ORDER BY 1, 3 DESC, ${textOrder(sequelize(), 'table_name')} ASC`, params(filter));
    const out = new Map<string, Array<{ table: string; count: number }>>();
    for (const row of rows) out.set(String(row.bucket), [...(out.get(String(row.bucket)) ?? []), { table: String(row.table_name), count: num(row.count) }]);
    return out;
  },

  /** Searches per (database, table) read without a full-text index, most first, ties by database then table. */
  async unindexedCounts(filter: SearchFilter): Promise<Array<UnindexedTable & { count: number }>> {
    const rows = await select(sequelize(), `
      SELECT database_id, table_name, SUM(searches) AS count FROM search_table_stats_daily WHERE ${within(filter, 'day')} AND kind = 'unindexed'
      GROUP BY database_id, table_name ORDER BY 3 DESC, ${textOrder(sequelize(), 'database_id')} ASC, ${textOrder(sequelize(), 'table_name')} ASC`, params(filter));
    return rows.map((row) => ({ databaseId: String(row.database_id), table: String(row.table_name), count: num(row.count) }));
  },

  /** Per UTC day (YYYY-MM-DD) with searches, the nearest-rank percentiles asked for, exact (the daily histogram). */
  async dailyPercentiles(filter: SearchFilter, percentiles: number[]): Promise<Map<string, number[]>> {
    const rows = await select(sequelize(), `
      SELECT ${bucketOf('day', 'day')} AS bucket, response_time_ms AS ms, SUM(searches) AS count FROM search_latency_daily
      WHERE ${within(filter, 'day')} GROUP BY 1, 2 ORDER BY 1, 2`, params(filter));
    const days = new Map<string, Array<{ ms: number; count: number }>>();
    for (const row of rows) days.set(String(row.bucket), [...(days.get(String(row.bucket)) ?? []), { ms: num(row.ms), count: num(row.count) }]);
    const out = new Map<string, number[]>();
    for (const [day, histogram] of days) {
      const total = histogram.reduce((sum, h) => sum + h.count, 0);
      out.set(day, percentiles.map((p) => {
        const rank = Math.max(1, Math.ceil((p / 100) * total));
        let seen = 0;
        return histogram.find((h) => (seen += h.count) >= rank)?.ms ?? 0;
      }));
    }
    return out;
  },

  /** Queries whose searches found nothing (status ok), most such searches first, ties by query text. */
  async zeroResultQueries(filter: SearchFilter, limit: number): Promise<Array<{ query: string; count: number; lastAt: Date }>> {
    const rows = await select(sequelize(), `
      SELECT query, SUM(zero_results) AS count, MAX(last_at) AS last_at FROM search_query_stats_daily WHERE ${within(filter, 'day')}
      GROUP BY query HAVING SUM(zero_results) > 0 ORDER BY 2 DESC, ${textOrder(sequelize(), 'query')} ASC LIMIT :limit`, params(filter, { limit }));
    return rows.map((row) => ({ query: String(row.query), count: num(row.count), lastAt: toDate(row.last_at)! }));
  },

  /** Searches that read each connection (from the raw records: the roll-ups keep tables, not connections). */
  async databaseCounts(filter: SearchFilter): Promise<Array<{ databaseId: string; count: number }>> {
    const elements = jsonElements(sequelize(), 'databases', 'string');
    const id = sequelize().getDialect() === 'postgres' ? `(e.value #>> '{}')` : 'e.value';
    const rows = await select(sequelize(), `
      SELECT ${id} AS database_id, COUNT(DISTINCT r.id) AS count FROM search_records r, ${elements.from}
      WHERE ${elements.where} AND r.created_at >= :from AND r.created_at < :to${filter.userId ? ' AND r.user_id = :userId' : ''}
      GROUP BY 1 ORDER BY 2 DESC, 1 ASC`, params(filter));
    return rows.map((row) => ({ databaseId: String(row.database_id), count: num(row.count) }));
  },

  /** Nearest-rank percentile of response times, exact (from the daily histogram of distinct values). */
  async responseTimePercentile(filter: SearchFilter, percentile: number): Promise<number> {
    const rows = await select(sequelize(), `
      SELECT response_time_ms AS ms, SUM(searches) AS count FROM search_latency_daily WHERE ${within(filter, 'day')}
      GROUP BY response_time_ms ORDER BY response_time_ms`, params(filter));
    const total = rows.reduce((sum, row) => sum + num(row.count), 0);
    const rank = Math.ceil((percentile / 100) * total);
    let seen = 0;
    for (const row of rows) {
      seen += num(row.count);
      if (seen >= rank) return num(row.ms);
    }
    return 0;
  },

  /**
   * The slowest single searches of a user, with their email. The latency roll-up gives the response time of the
   * `limit`-th slowest, so the raw read is a short walk of index search_records_user_slowest from the top.
   */
  async slowest(filter: SearchFilter & { userId: string }, limit: number): Promise<Array<{ query: string; responseTimeMs: number; resultCount: number; email: string }>> {
    const top = await select(sequelize(), `
      SELECT response_time_ms FROM search_latency_daily WHERE ${within(filter, 'day')}
      GROUP BY response_time_ms ORDER BY response_time_ms DESC LIMIT :limit`, params(filter, { limit }));
    if (top.length === 0) return [];
    // SQLite's planner would pick the created_at index and sort the whole range; PostgreSQL's statistics choose well.
    const hint = sequelize().getDialect() === 'sqlite' ? 'INDEXED BY search_records_user_slowest' : '';
    const rows = await select(sequelize(), `
      SELECT s.query, s.response_time_ms, s.result_count, (SELECT u.email FROM users u WHERE u.id = s.user_id) AS email
      FROM search_records s ${hint}
      WHERE s.user_id = :userId AND s.response_time_ms >= :threshold AND s.created_at >= :from AND s.created_at < :to
      ORDER BY s.response_time_ms DESC, s.created_at DESC, ${textOrder(sequelize(), 's.id')} DESC LIMIT :limit`,
      params(filter, { limit, threshold: num(top[top.length - 1]!.response_time_ms) }));
    return rows.map((row) => ({ query: String(row.query), responseTimeMs: num(row.response_time_ms), resultCount: num(row.result_count), email: String(row.email) }));
  },

  /** Admin user activity: every user with their searches in the range, most searches first, then by email. */
  async userActivity(filter: SearchFilter, limit: number, offset: number): Promise<Array<{
    id: string; email: string; name: string; role: 'user' | 'admin'; lastActiveAt: Date; queryCount: number; averageMs: number; lastQueryAt: Date | null;
  }>> {
    const rows = await select(sequelize(), `
      SELECT u.id, u.email, u.name, u.role, u.last_active_at, COALESCE(a.searches, 0) AS query_count, a.total_ms, a.last_at
      FROM users u LEFT JOIN (
        SELECT user_id, SUM(searches) AS searches, SUM(total_ms) AS total_ms, MAX(last_at) AS last_at
        FROM search_stats_hourly WHERE ${within({ ...filter, userId: null }, 'hour')} GROUP BY user_id
      ) a ON a.user_id = u.id
      ORDER BY 6 DESC, ${textOrder(sequelize(), 'u.email')} ASC LIMIT :limit OFFSET :offset`, params(filter, { limit, offset }));
    return rows.map((row) => ({
      id: String(row.id),
      email: String(row.email),
      name: String(row.name),
      role: row.role === 'admin' ? 'admin' : 'user',
      lastActiveAt: toDate(row.last_active_at)!,
      queryCount: num(row.query_count),
      averageMs: ratio(row.total_ms, row.query_count),
      lastQueryAt: toDate(row.last_at),
    }));
  },
};

export type SearchStatsRepository = typeof searchStatsRepository;
