/** What the insight rules read, and the small helpers they share (see insights.ts). */
import type { components } from '../../../generated/openapi.js';
import type { TierName } from '../../rate-limit/tiers.js';
import { SLOW_SEARCH_MS } from '../../repositories/search-rollups.js';
import type { QueryStats, SearchTotals } from '../../repositories/search-stats-repository.js';
import type { AnalyticsRange } from '../../rules/analytics-range.js';
import type { UnindexedTableHint } from '../../sql-search/fulltext-statements.js';

type Engine = components['schemas']['DatabaseEngine'];
export type DashboardInsight = components['schemas']['DashboardResponse']['data']['insights'][number];
export type Level = 'low' | 'medium' | 'high';

/** A search slower than this is slow (the roll-ups count them as they are written). */
export const SLOW_MS = SLOW_SEARCH_MS;
/** A query needs this many searches in one of the two periods before it can rise or fall. */
export const MIN_TREND_SEARCHES = 3;

export interface UnindexedDatabaseFacts {
  databaseId: string;
  engine: Engine;
  tables: Array<UnindexedTableHint & { searches: number }>;
}

export interface InsightFacts {
  now: Date;
  range: AnalyticsRange;
  totals: SearchTotals;
  /** Nearest-rank 95th percentile of response times, ms. */
  p95Ms: number;
  previousSearches: number;
  slowQueries: QueryStats[];
  slowTables: Array<{ table: string; count: number }>;
  zeroQueries: QueryStats[];
  failedQueries: QueryStats[];
  topTables: Array<{ table: string; count: number }>;
  unindexed: UnindexedDatabaseFacts[];
  peakHour: { bucket: string; searches: number } | null;
  tier: { name: TierName; requestsPerHour: number };
  /** Searches per query in this range and the previous one, for the queries frequent in either. */
  queryShifts: Array<{ query: string; current: number; previous: number }>;
  /** The range's most frequent queries, most frequent first (related queries come from these). */
  topQueries: string[];
}

/** One finding in both shapes it is served in, with its weight for topRecommendations. */
export interface Finding<W> {
  wire: W;
  flat: DashboardInsight;
  weight: number;
  headline?: string;
}

export const round1 = (value: number) => Math.round(value * 10) / 10;
export const round2 = (value: number) => Math.round(value * 100) / 100;
export const percent = (part: number, whole: number) => (whole === 0 ? 0 : round1((100 * part) / whole));
export const weightOf: Record<Level, number> = { low: 1, medium: 2, high: 3 };
/** min(1, searches the rule looked at / 100), two decimals. */
export const confidence = (searches: number) => round2(Math.min(1, searches / 100));
export const level = (value: number, medium: number, high: number): Level => (value >= high ? 'high' : value >= medium ? 'medium' : 'low');
/** `1 search`, `2 searches`. */
export const searchesN = (n: number) => `${n} ${n === 1 ? 'search' : 'searches'}`;
export const quoted = (queries: QueryStats[]) => queries.map((q) => `"${q.query}" (${q.count})`).join(', ');

/** Percent change against the previous range of equal length; 100 when that had none and this has some. */
export function growthRate(current: number, previous: number): number {
  if (previous === 0) return current > 0 ? 100 : 0;
  return round1((100 * (current - previous)) / previous);
}

export const trendOf = (rate: number): 'up' | 'down' | 'flat' => (rate >= 10 ? 'up' : rate <= -10 ? 'down' : 'flat');
