/** optimizationInsights rule: tables searched without a full-text index, with the statement that adds one. */
import type { components } from '../../../generated/openapi.js';
import { effortOf, fullTextIndexStatement } from '../../sql-search/fulltext-statements.js';
import { confidence, level, searchesN, weightOf, type Finding, type InsightFacts, type UnindexedDatabaseFacts } from './insight-facts.js';

type OptimizationInsight = components['schemas']['Insights']['optimizationInsights'][number];

export function optimizationRules(facts: InsightFacts): Finding<OptimizationInsight>[] {
  return facts.unindexed.map((db) => missingIndex(facts, db)).filter((finding) => finding !== null);
}

/**
 * Rule: tables of one connection that searches read without a full-text index, with the statement that adds one
 * on that engine. Impact by the share of searches that read the most searched of them: high >= 25%, medium >= 5%.
 */
function missingIndex(facts: InsightFacts, db: UnindexedDatabaseFacts): Finding<OptimizationInsight> | null {
  // A table whose discovered schema now shows a full-text index has been fixed since.
  const tables = db.tables.filter((t) => (t.schema?.fullTextIndexes.length ?? 0) === 0);
  if (tables.length === 0) return null;
  const searches = facts.totals.searches;
  const impact = level(searches === 0 ? 0 : Math.max(...tables.map((t) => t.searches)) / searches, 0.05, 0.25);
  const names = tables.map((t) => t.table);
  const recommendations = tables.map((t) => ({
    table: t.table,
    action: fullTextIndexStatement(db.engine, t) ??
      `Discover the schema (GET /api/v1/databases/${db.databaseId}/schema) so the statement can name the text columns of ${t.table}, then add a full-text index`,
    benefit: `${searchesN(t.searches)} in this period would use the index instead of a scan.`,
  }));
  const title = tables.length === 1 ? `${names[0]} is searched without a full-text index` : `${tables.length} tables are searched without a full-text index`;
  return {
    wire: {
      type: 'missing_fulltext_index',
      databaseId: db.databaseId,
      title,
      impact,
      details: {
        currentState: `Bounded scans: ${tables.map((t) => `${t.table} (${searchesN(t.searches)})`).join(', ')}.`,
        potentialImprovement: 'Index lookups with relevance ranking instead of scanning rows.',
        estimatedEffort: effortOf[db.engine],
      },
      recommendations,
    },
    flat: {
      type: 'missing_fulltext_index',
      confidence: confidence(searches),
      description: `${title} (${db.databaseId}).`,
      actionable: true,
      data: { databaseId: db.databaseId, engine: db.engine, tables: names, searches: tables.map((t) => t.searches) },
    },
    weight: weightOf[impact],
    headline: `Add a full-text index to ${names.join(', ')} in ${db.databaseId}`,
  };
}
