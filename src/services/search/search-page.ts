/**
 * The response of searchDatabases (SearchResponse.data): the merged page as results, totals and paging, and per
 * database whether it answered and how its tables were searched (from the index, live, or both), so a caller can tell
 * a partial or approximate answer from a whole one.
 */
import { lagSeconds } from '../../search-index/changes/freshness.js';
import type { components } from '../../../generated/openapi.js';
import { keyText, type DatabaseAnswer, type PageWindow, type Ranking, type ResultRow } from '../../search-core/engine.js';
import type { Answer } from './search-merge.js';
import type { DatabasePlan, Route } from './search-plan.js';
import { MAX_OFFSET, type SearchData, type SearchMode, type SearchRequest } from './search-request.js';

type SearchResult = components['schemas']['SearchResult'];

/** What the search found: the fused page, each row's details (null: vanished), and every engine's ranking. */
export interface Found {
  answer: Answer;
  rows: Array<ResultRow | null>;
  rankings: Array<Ranking<unknown>>;
  /** What a relaxed reading of the query gave up (empty: the query matched as written). */
  relaxed: SearchData['relaxed'];
  /** How long the engines took to rank, all of them at once. */
  rankTookMs: number;
}

export interface PageInput {
  request: SearchRequest;
  mode: SearchMode;
  window: PageWindow;
  route: Route;
  found: Found;
  nextCursor: () => string;
  /** The whole search's time so far. */
  tookMs: number;
  /** The answer's moment, that each database's lag is measured to. */
  now: number;
}

/** The response page: results, totals, paging, each database's status and how its tables were searched. */
export function pageData(p: PageInput): SearchData {
  const { answer, rankings } = p.found;
  const { offset, limit } = p.window;
  const hasMore = offset + answer.page.length < answer.total;
  const recordOf = new Map(p.route.plans.map((plan) => [plan.record.id, plan.record]));
  const results = answer.page.flatMap(({ item, score }, i) => result(recordOf.get(item.databaseId)!, p.found.rows[i] ?? null, score, offset + i + 1) ?? []);
  const data: SearchData = {
    query: p.request.query,
    searchMode: p.mode,
    results,
    total: answer.total,
    totalIsEstimate: answer.totalIsEstimate,
    approximate: answer.approximate || rankings.some((r) => [...r.databases.values()].some((d) => d.approximate)),
    limit,
    offset,
    hasMore,
    nextCursor: hasMore && offset + limit <= MAX_OFFSET ? p.nextCursor() : null,
    tookMs: p.tookMs,
    databases: p.route.plans.map((plan) => {
      const answers = rankings.flatMap((r) => r.databases.get(plan.record.id) ?? []);
      const failed = answers.find((a) => a.status !== 'ok');
      const live = answers.some((a) => a.byRankOnly);
      const fromIndex = plan.sources.length > 0;
      return {
        databaseId: plan.record.id,
        databaseName: plan.record.name,
        engine: plan.record.engine,
        status: failed?.status ?? 'ok',
        tookMs: answers.reduce((most, a) => Math.max(most, a.tookMs ?? p.found.rankTookMs), 0),
        matches: answers.reduce((sum, a) => sum + a.matches, 0),
        error: failed?.error ?? null,
        source: fromIndex && live ? 'mixed' : fromIndex ? 'index' : 'live',
        indexedAt: plan.indexedAt?.toISOString() ?? null,
        lagSeconds: lagSeconds(plan.indexedAt, p.now),
        approximate: answers.some((a) => databaseApproximate(a, answer.approximate)),
      };
    }),
    unindexedTables: rankings.flatMap((r) => r.tables.filter((t) => t.scanned).map(({ databaseId, table }) => ({ databaseId, table }))),
    liveTables: p.mode === 'semantic' || p.route.excluded.some((t) => t.reason === 'not_indexed') ? []
      : p.route.plans.flatMap((plan) => plan.live.map((t) => ({ databaseId: plan.record.id, ...t }))),
    excludedTables: p.route.excluded,
    corrections: rankings.flatMap((r) => r.corrections),
    relaxed: p.found.relaxed,
  };
  if ((p.request.facets?.length ?? 0) > 0) {
    data.facets = Object.assign({}, ...rankings.map((r) => r.facets)) as NonNullable<SearchData['facets']>;
    data.facetsAreEstimate = rankings.some((r) => r.facetsAreEstimate);
  }
  if (p.mode === 'semantic' || p.mode === 'hybrid') data.semanticUnindexedTables = p.route.notSemantic;
  return data;
}

/** A database's rows are approximate when its own ranking is, or when they were merged by rank into a fused answer. */
function databaseApproximate(answer: DatabaseAnswer, fused: boolean): boolean {
  return answer.byRankOnly && (fused || answer.approximate);
}

/** A page row as a result; a row whose stored copy vanished meanwhile (a sync removed it) is left out. */
function result(record: DatabasePlan['record'], row: ResultRow | null, score: number, rank: number): SearchResult | null {
  if (!row) return null;
  return {
    id: `${record.id}:${row.table}:${keyText(Object.values(row.primaryKey))}`,
    databaseId: record.id,
    databaseName: record.name,
    table: row.table,
    primaryKey: Object.fromEntries(Object.entries(row.primaryKey).map(([k, v]) => [k, plainKey(v)])),
    rank,
    score: Math.round(score * 1e8) / 1e8,
    snippet: row.snippet,
    matchedColumns: row.matchedColumns,
    fields: row.fields,
  };
}

/** A key value as JSON carries it (the live path's engines return dates, big integers and bytes). */
function plainKey(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}
