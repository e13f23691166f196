/**
 * getAnalyticsInsights: every insight is a stated rule over recorded searches (the rules and thresholds are
 * repeated in the operation's description in openapi.yaml; change both together). Pure functions over facts the
 * analytics service gathers (insight-facts.ts), so each rule is unit-tested without a database. The rules live in
 * insights-performance.ts, insights-usage.ts and insights-optimization.ts; this file assembles them.
 */
import type { components } from '../../../generated/openapi.js';
import type { SearchTotals } from '../../repositories/search-stats-repository.js';
import { growthRate, percent, type DashboardInsight, type Finding, type InsightFacts } from './insight-facts.js';
import { optimizationRules } from './insights-optimization.js';
import { performanceRules } from './insights-performance.js';
import { queryTrends, usageRules } from './insights-usage.js';

export { confidence, growthRate, SLOW_MS, type DashboardInsight, type InsightFacts, type UnindexedDatabaseFacts } from './insight-facts.js';
export { relatedQueries } from './insights-usage.js';

type Insights = components['schemas']['Insights'];

/**
 * healthScore = round(100 - 40 * zeroShare - 30 * slowShare - 20 * failedShare - 10 * unindexedShare), within
 * 0..100, each share a fraction of the range's searches; 100 without searches.
 */
export function healthScore(totals: SearchTotals): number {
  if (totals.searches === 0) return 100;
  const share = (count: number) => count / totals.searches;
  const score = 100 - 40 * share(totals.zeroResults) - 30 * share(totals.slow) - 20 * share(totals.failed) - 10 * share(totals.unindexed);
  return Math.max(0, Math.min(100, Math.round(score)));
}

/**
 * The Insights object of getAnalyticsInsights, and the same findings in the dashboard's short form. Without
 * recommendations, every `recommendation(s)` and the topRecommendations are left out.
 */
export function buildInsights(facts: InsightFacts, includeRecommendations: boolean): { insights: Insights; flat: DashboardInsight[] } {
  const performance = performanceRules(facts);
  const usage = usageRules(facts);
  const optimization = optimizationRules(facts);
  const trends = queryTrends(facts);
  const ranked = [...performance, ...optimization, ...usage]
    .filter((finding) => finding.headline)
    .sort((a, b) => b.weight - a.weight);
  const strip = <W extends object>(finding: Finding<W>): W => {
    if (includeRecommendations) return finding.wire;
    const { recommendation: _r, recommendations: _rs, ...rest } = finding.wire as W & { recommendation?: unknown; recommendations?: unknown };
    return rest as W;
  };
  const searches = facts.totals.searches;
  return {
    insights: {
      generatedAt: facts.now.toISOString(),
      analysisperiod: facts.range.label,
      performanceInsights: performance.map(strip),
      usageInsights: usage.map(strip),
      optimizationInsights: optimization.map(strip),
      trendInsights: trends.map((finding) => finding.wire),
      summary: {
        keyMetrics: {
          totalSearches: searches,
          growthRate: growthRate(searches, facts.previousSearches),
          userSatisfaction: searches === 0 ? 100 : percent(facts.totals.withResults, searches),
        },
        topRecommendations: includeRecommendations ? ranked.slice(0, 3).map((finding) => finding.headline!) : [],
        healthScore: healthScore(facts.totals),
        nextReview: new Date(facts.now.getTime() + facts.range.days * 86_400_000).toISOString(),
      },
    },
    flat: [...performance, ...usage, ...optimization, ...trends].map((finding) => finding.flat),
  };
}
