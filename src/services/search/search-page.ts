/**
 * The response of searchDatabases (SearchResponse.data): the merged page as results, totals and paging, and per
 * database whether it answered and how its tables were searched (from the index, live, or both), so a caller can tell
 * a partial or approximate answer from a whole one.
 */
import { lagSeconds } from '../../search-index/changes/freshness.js';
import type { components } from '../../../generated/openapi.js';
import type { HitDetail as LiveDetail } from '../../sql-search/types.js';
import type { HitDetail, IndexSearchResult } from '../../search-index/index-search.js';
import { keyText, targetName, type LiveOutcome } from './live-search.js';
import type { Answer, Candidate } from './search-merge.js';
import type { DatabasePlan, NotSemantic } from './search-plan.js';
import { MAX_OFFSET, type SearchData, type SearchMode, type SearchRequest } from './search-request.js';

type SearchResult = components['schemas']['SearchResult'];

export interface PageInput {
  request: SearchRequest;
  mode: SearchMode;
  answer: Answer;
  offset: number;
  limit: number;
  nextCursor: () => string;
  /** The whole search's time so far. */
  tookMs: number;
  plans: DatabasePlan[];
  liveOutcomes: LiveOutcome[];
  indexed: IndexSearchResult;
  indexTookMs: number;
  notSemantic: NotSemantic[];
  excluded: SearchData['excludedTables'];
  /** What a relaxed reading of the query gave up (empty: the query matched as written). */
  relaxed: SearchData['relaxed'];
  /** The answer's moment, that each database's lag is measured to. */
  now: number;
}

/** The response page: results, totals, paging, each database's status and how its tables were searched. */
export function pageData(p: PageInput): SearchData {
  const { answer, offset, limit } = p;
  const hasMore = offset + answer.page.length < answer.total;
  const outcomeOf = new Map(p.liveOutcomes.map((o) => [o.record.id, o]));
  const results = answer.page.flatMap(({ item, score }, i) => result(item, score, offset + i + 1) ?? []);
  const data: SearchData = {
    query: p.request.query,
    searchMode: p.mode,
    results,
    total: answer.total,
    totalIsEstimate: answer.totalIsEstimate,
    approximate: answer.approximate || p.liveOutcomes.some((o) => o.tables.some((t) => t.ranking.approximate)),
    limit,
    offset,
    hasMore,
    nextCursor: hasMore && offset + limit <= MAX_OFFSET ? p.nextCursor() : null,
    tookMs: p.tookMs,
    databases: p.plans.map((plan) => {
      const outcome = outcomeOf.get(plan.record.id);
      const fromIndex = plan.sources.length > 0;
      const liveMatches = outcome?.tables.reduce((s, t) => s + t.ranking.total, 0) ?? 0;
      return {
        databaseId: plan.record.id,
        databaseName: plan.record.name,
        engine: plan.record.engine,
        status: outcome?.status ?? 'ok',
        tookMs: Math.max(outcome?.tookMs ?? 0, fromIndex ? p.indexTookMs : 0),
        matches: (p.indexed.matchesByConnection.get(plan.record.id) ?? 0) + liveMatches,
        error: outcome?.error ?? null,
        source: fromIndex && outcome ? 'mixed' : fromIndex ? 'index' : 'live',
        indexedAt: plan.indexedAt?.toISOString() ?? null,
        lagSeconds: lagSeconds(plan.indexedAt, p.now),
        approximate: Boolean(outcome) && (answer.approximate || (outcome?.tables.some((t) => t.ranking.approximate) ?? false)),
      };
    }),
    unindexedTables: p.liveOutcomes.flatMap((o) => o.tables.filter((t) => t.queries.target.index === null)
      .map((t) => ({ databaseId: o.record.id, table: targetName(t.queries.target) }))),
    liveTables: p.mode === 'semantic' || p.excluded.some((t) => t.reason === 'not_indexed') ? []
      : p.plans.flatMap((plan) => plan.live.map((t) => ({ databaseId: plan.record.id, ...t }))),
    excludedTables: p.excluded,
    corrections: p.indexed.corrections,
    relaxed: p.relaxed,
  };
  if ((p.request.facets?.length ?? 0) > 0) {
    data.facets = p.indexed.facets as NonNullable<SearchData['facets']>;
    data.facetsAreEstimate = p.indexed.totalIsEstimate;
  }
  if (p.mode === 'semantic' || p.mode === 'hybrid') data.semanticUnindexedTables = p.notSemantic;
  return data;
}

/** A page row as a result; an index row whose stored copy vanished meanwhile (a sync removed it) is left out. */
function result(candidate: Candidate, score: number, rank: number): SearchResult | null {
  const { record } = candidate.plan;
  let table: string;
  let primaryKey: Record<string, unknown>;
  let detail: LiveDetail | HitDetail;
  if (candidate.kind === 'index') {
    if (!candidate.detail) return null;
    table = candidate.source.tableName;
    primaryKey = Object.fromEntries(candidate.source.keyColumns.map((c) => [c, candidate.detail!.fields[c] ?? candidate.detail!.primaryKey[c] ?? null]));
    detail = candidate.detail;
  } else {
    table = targetName(candidate.table.queries.target);
    primaryKey = Object.fromEntries(candidate.table.queries.target.keys.map((k, i) => [k.name, candidate.row.keys[i] === undefined ? null : candidate.row.keys[i]]));
    detail = candidate.row.detail ?? { fields: { ...primaryKey }, snippet: '', matchedColumns: [] };
  }
  return {
    id: `${record.id}:${table}:${keyText(Object.values(primaryKey))}`,
    databaseId: record.id,
    databaseName: record.name,
    table,
    primaryKey: Object.fromEntries(Object.entries(primaryKey).map(([k, v]) => [k, plainKey(v)])),
    rank,
    score: Math.round(score * 1e8) / 1e8,
    snippet: detail.snippet,
    matchedColumns: detail.matchedColumns,
    fields: detail.fields,
  };
}

/** A key value as JSON carries it (the live path's engines return dates, big integers and bytes). */
function plainKey(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}
