/** performanceInsights rules (stated in getAnalyticsInsights' description in openapi.yaml). */
import type { components } from '../../../generated/openapi.js';
import { confidence, level, percent, quoted, round1, round2, searchesN, SLOW_MS, weightOf, type Finding, type InsightFacts } from './insight-facts.js';

type PerformanceInsight = components['schemas']['Insights']['performanceInsights'][number];

export function performanceRules(facts: InsightFacts): Finding<PerformanceInsight>[] {
  return [slowQueries(facts), zeroResults(facts), failedSearches(facts)].filter((finding) => finding !== null);
}

/** Rule: searches over SLOW_MS. Severity by their share: high >= 10%, medium >= 2%, else low. */
function slowQueries(facts: InsightFacts): Finding<PerformanceInsight> | null {
  const { slow, searches } = facts.totals;
  if (slow === 0) return null;
  const share = slow / searches;
  const severity = level(share, 0.02, 0.1);
  const slowest = facts.slowQueries.map((q) => `"${q.query}" (${round1(q.averageMs)} ms average over ${q.count})`).join(', ');
  const tables = facts.slowTables.slice(0, 5);
  const unindexedNames = new Set(facts.unindexed.flatMap((db) => db.tables.map((t) => t.table)));
  const unindexedSlow = tables.filter((t) => unindexedNames.has(t.table)).map((t) => t.table);
  const recommendation = unindexedSlow.length > 0
    ? { action: `Add a full-text index to ${unindexedSlow.join(', ')} (the statements are in optimizationInsights)`, effort: 'low' as const, expectedImprovement: 'Index lookups instead of bounded scans for these searches' }
    : { action: `Narrow these searches with "databases" or "tables"${tables.length ? `, and check the load on ${tables.map((t) => t.table).join(', ')}` : ''}`, effort: 'medium' as const, expectedImprovement: 'Fewer tables read per search' };
  return {
    wire: {
      type: 'slow_queries',
      severity,
      title: `${searchesN(slow)} took over ${SLOW_MS} ms`,
      description: `p95 response time was ${facts.p95Ms} ms. Slowest queries: ${slowest}.` +
        (tables.length ? ` Tables behind them: ${tables.map((t) => `${t.table} (${t.count})`).join(', ')}.` : ''),
      impact: `${percent(slow, searches)}% of searches answered slowly.`,
      recommendation,
      affectedQueries: facts.slowQueries.map((q) => q.query),
    },
    flat: {
      type: 'slow_queries',
      confidence: confidence(searches),
      description: `${percent(slow, searches)}% of searches took over ${SLOW_MS} ms (p95 ${facts.p95Ms} ms).`,
      actionable: true,
      data: { count: slow, share: round2(share), p95Ms: facts.p95Ms, queries: facts.slowQueries.map((q) => q.query), tables: tables.map((t) => t.table) },
    },
    weight: weightOf[severity],
    headline: recommendation.action,
  };
}

/** Rule: searches that succeeded with no result. Severity by share: high >= 20%, medium >= 5%, else low. */
function zeroResults(facts: InsightFacts): Finding<PerformanceInsight> | null {
  const { zeroResults: zero, searches } = facts.totals;
  if (zero === 0) return null;
  const severity = level(zero / searches, 0.05, 0.2);
  const top = facts.zeroQueries.slice(0, 3).map((q) => `"${q.query}"`).join(', ');
  const action = `Check that the data for ${top} is in a connected table and that its text columns are searched`;
  return {
    wire: {
      type: 'zero_results',
      severity,
      title: `${searchesN(zero)} found nothing`,
      description: `${percent(zero, searches)}% of searches returned no results. Most frequent: ${quoted(facts.zeroQueries)}.`,
      impact: `${percent(zero, searches)}% of searches left the user without an answer.`,
      recommendation: { action, effort: 'medium' },
      affectedQueries: facts.zeroQueries.map((q) => q.query),
    },
    flat: {
      type: 'zero_results',
      confidence: confidence(searches),
      description: `${percent(zero, searches)}% of searches returned no results.`,
      actionable: true,
      data: { count: zero, share: round2(zero / searches), queries: facts.zeroQueries.map((q) => q.query) },
    },
    weight: weightOf[severity],
    headline: action,
  };
}

/** Rule: searches with status partial or error. Severity by share: high >= 5%, medium >= 1%, else low. */
function failedSearches(facts: InsightFacts): Finding<PerformanceInsight> | null {
  const { failed, searches } = facts.totals;
  if (failed === 0) return null;
  const severity = level(failed / searches, 0.01, 0.05);
  const action = 'Check the failing connections with GET /api/v1/databases/{databaseId}/status; raise SEARCH_TIMEOUT_MS if they time out';
  return {
    wire: {
      type: 'failed_searches',
      severity,
      title: `${searchesN(failed)} failed or returned partial results`,
      description: `${percent(failed, searches)}% of searches had a database that failed or timed out. Most frequent: ${quoted(facts.failedQueries)}.`,
      impact: `Results were missing from ${percent(failed, searches)}% of searches.`,
      recommendation: { action, effort: 'low' },
      affectedQueries: facts.failedQueries.map((q) => q.query),
    },
    flat: {
      type: 'failed_searches',
      confidence: confidence(searches),
      description: `${percent(failed, searches)}% of searches failed or were partial.`,
      actionable: true,
      data: { count: failed, share: round2(failed / searches), queries: facts.failedQueries.map((q) => q.query) },
    },
    weight: weightOf[severity],
    headline: action,
  };
}
