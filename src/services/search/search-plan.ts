/**
 * How one search reads each database: which of its selected tables Quarry's index answers and which are searched live
 * by the database's own full-text search, and which cannot be searched by meaning yet. The index answers a table once
 * it has a finished sync, unless the connection's indexing is off, the caller asked for live results, the search
 * selects columns, or the mode is boolean (the index matches words, not phrases or prefixes). This is what the engines
 * share; each makes its own part of the search from the route (IndexEngine.plan, LiveEngine.plan).
 */
import { semanticReady } from '../../search-index/readiness.js';
import { indexedAsOf } from '../../search-index/changes/freshness.js';
import type { components } from '../../../generated/openapi.js';
import type { TableSchema } from '../../connectors/index.js';
import { AppError } from '../../errors/app-error.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import { contentTables, indexableProblem, tableId } from '../../search-index/documents.js';
import { indexedColumns } from '../../search-index/filter-columns.js';
import type { SearchCatalog } from './search-catalog.js';
import type { StageTimer } from '../../lib/stage-timer.js';
import { needsIndex, type RefinableSource, type Refinements } from './search-refinements.js';
import type { PageRequest, SearchData, SearchMode, SearchRequest } from './search-request.js';

type LiveReason = components['schemas']['LiveTable']['reason'];
export type NotSemantic = NonNullable<components['schemas']['SearchResponse']['data']['semanticUnindexedTables']>[number];

/** How one database is searched: which of its selected tables the index answers and which are searched live. */
export interface DatabasePlan {
  record: DatabaseConnectionRecord;
  sources: RefinableSource[];
  live: Array<{ table: string; reason: LiveReason }>;
  /** Tables of the index's answer, by name (left out of the live search). */
  indexedNames: Set<string>;
  /** The index holds these tables' rows as of at least this moment (the oldest start of their last syncs). */
  indexedAt: Date | null;
  /** The live search must run: a table is left for it, or the schema is unknown. */
  searchLive: boolean;
  /** Selected tables that cannot be searched by meaning yet, and why. */
  notSemantic: NotSemantic[];
  /** Every table of the connection in the index is searched from it (none partly written by a first sync). */
  wholeIndex: boolean;
  /** When each of its indexed tables was last synced (ms): what the index's part of an answer depends on. */
  syncedAt: number[];
}

export interface PlanDeps {
  /** Each database's tables and the index's state of them. */
  catalog: Pick<SearchCatalog, 'tables' | 'indexState'>;
  /** The embedding model semantic tables must be indexed with to be searched by meaning. */
  providerId: string;
}

/** One plan per database the search reads. */
export async function planSearch(deps: PlanDeps, records: DatabaseConnectionRecord[], request: SearchRequest, mode: SearchMode): Promise<DatabasePlan[]> {
  const { tables: indexed, liveJobs } = await deps.catalog.indexState(records.map((r) => r.id));
  return Promise.all(records.map(async (record): Promise<DatabasePlan> => {
    const plan: DatabasePlan = { record, sources: [], live: [], indexedNames: new Set(), indexedAt: null, searchLive: false, notSemantic: [], wholeIndex: false, syncedAt: [] };
    let schema: TableSchema[];
    try {
      schema = await deps.catalog.tables(record);
    } catch {
      plan.searchLive = true; // unknown tables: the live search reports why the database cannot be read
      return plan;
    }
    const columnsSelected = (request.columns?.length ?? 0) > 0;
    const everyTable: LiveReason | null = !record.indexEnabled ? 'indexing_off'
      : request.live ? 'live_requested'
        : columnsSelected ? 'columns_selected'
          : mode === 'boolean' ? 'boolean_mode' : null;
    for (const table of contentTables(schema).filter((t) => selected(t, request.tables))) {
      const name = tableId(table);
      const entry = indexed.find((t) => t.connectionId === record.id && t.tableName === name);
      const running = liveJobs.some((j) => j.connectionId === record.id && j.tableName === name);
      plan.notSemantic.push(...semanticGap(deps.providerId, record, name, entry, running));
      if (everyTable === null && entry?.syncedAt) {
        plan.sources.push({
          src: entry.id, connectionId: record.id, tableName: name,
          keyColumns: entry.keyColumns ?? table.primaryKey, textColumns: entry.textColumns ?? table.textColumns,
          semanticReady: semanticReady(entry, deps.providerId),
          // Only columns the rows were written with: one chosen since waits for the sync that writes it.
          filterable: indexedColumns(table, writtenColumns(entry.filterableColumns, entry.syncedColumns?.filterable)),
          sortable: indexedColumns(table, writtenColumns(entry.sortableColumns, entry.syncedColumns?.sortable)),
        });
        plan.indexedNames.add(name);
        plan.syncedAt.push(entry.syncedAt.getTime());
        const asOf = indexedAsOf(entry)!;
        if (!plan.indexedAt || asOf < plan.indexedAt) plan.indexedAt = asOf;
      } else {
        plan.live.push({ table: name, reason: everyTable ?? (indexableProblem(table) ? 'not_indexable' : 'not_synced_yet') });
      }
    }
    plan.searchLive = plan.live.length > 0;
    plan.wholeIndex = indexed.filter((t) => t.connectionId === record.id).every((t) => plan.indexedNames.has(t.tableName));
    return plan;
  }));
}

/** The chosen columns that the rows in the index carry. */
function writtenColumns(chosen: string[] | null | undefined, written: string[] | undefined): string[] {
  return (chosen ?? []).filter((column) => written?.includes(column) ?? false);
}

/** A table named by the request's `tables` filter: its bare name or `schema.table`. */
function selected(table: TableSchema, names: string[] | null | undefined): boolean {
  if (!names || names.length === 0) return true;
  return names.includes(table.name) || (table.schema !== null && table.schema !== undefined && names.includes(`${table.schema}.${table.name}`));
}

/** Why a selected table is not in the semantic ranking, or nothing when it is. */
function semanticGap(providerId: string, record: DatabaseConnectionRecord, table: string, entry: IndexTableRecord | undefined, syncing: boolean): NotSemantic[] {
  const turnOn = `Turn semantic search on for it: PATCH /api/v1/databases/${record.id}/index/tables/${encodeURIComponent(table)} with {"semantic": true}.`;
  if (!entry?.semantic) return [{ databaseId: record.id, table, reason: 'never_indexed', message: `This table is not searched by meaning. ${turnOn}` }];
  if (semanticReady(entry, providerId)) return [];
  if (syncing) return [{ databaseId: record.id, table, reason: 'indexing', message: 'The table is being synced with embeddings; it is searched by meaning once the sync finishes.' }];
  if (entry.vectorModel && entry.vectorModel !== providerId) {
    return [{ databaseId: record.id, table, reason: 'model_changed', message: 'The table was embedded with another model; sync it again (POST .../index/sync).' }];
  }
  return [{ databaseId: record.id, table, reason: 'never_indexed', message: 'The table has no finished sync yet; sync it (POST .../index/sync).' }];
}

/** The plan when the index cannot be read: its indexed tables are searched live, and say why. */
export function withoutIndex(plan: DatabasePlan): DatabasePlan {
  const moved = [...plan.indexedNames].map((table) => ({ table, reason: 'index_unavailable' as const }));
  const live = [...plan.live, ...moved];
  return { ...plan, sources: [], indexedNames: new Set(), indexedAt: null, syncedAt: [], wholeIndex: false, live, searchLive: plan.searchLive || live.length > 0 };
}

/** How the search read its databases: the plan of each, and the tables it could not read as asked. */
export interface Route {
  plans: DatabasePlan[];
  notSemantic: NotSemantic[];
  excluded: SearchData['excludedTables'];
}

/**
 * How one search reads its databases, as every engine makes its part of it from (Engine.plan): the plan of each
 * database, the request and how it is refined, and what decides the ranking.
 */
export interface SearchRoute extends Route, RouteContext {
  request: SearchRequest;
  /** The indexed tables a filter left in, and the request's filter, sort, facets and weights as the index takes them. */
  refined: Refinements;
  /** Filters, sorting or facets: only the index can answer (tables searched live are left out). */
  byIndexOnly: boolean;
}

export interface RouteContext {
  mode: SearchMode;
  semanticRatio: number;
  page: PageRequest;
  /** The caller's search space in the index. */
  space: string;
  /** Every connection of the environment is read (no publishable key's or plan's cap left one out). */
  everyConnection: boolean;
  timer?: StageTimer;
}

/** The search's route: which engine reads which table, and what the request asks; each engine plans its part from it. */
export function routeSearch(plans: DatabasePlan[], request: SearchRequest, refined: Refinements, context: RouteContext): SearchRoute {
  const byIndexOnly = needsIndex(request);
  const excluded = [
    ...refined.excluded,
    // Filters, sorting and facets read the index: tables searched live are left out of such a search.
    ...(byIndexOnly ? plans.flatMap((p) => p.live.map((t) => ({ databaseId: p.record.id, table: t.table, reason: 'not_indexed' as const }))) : []),
  ];
  return { ...context, plans, notSemantic: plans.flatMap((p) => p.notSemantic), excluded, request, refined, byIndexOnly };
}

/** The route when the index cannot be read: every table is searched live, and says why. */
export function routeWithoutIndex(route: SearchRoute): SearchRoute {
  return { ...route, plans: route.plans.map(withoutIndex), refined: { ...route.refined, sources: [] } };
}

/** How long a search answered 503 INDEX_UNAVAILABLE should wait before it is sent again (seconds). */
export const INDEX_RETRY_AFTER_SECONDS = 10;

/** 503 INDEX_UNAVAILABLE: the index's storage is down and the search needs it (semantic, filters, sorting, facets). */
export function indexUnavailable(): AppError {
  return new AppError(
    'INDEX_UNAVAILABLE',
    `The search index cannot be read right now, and this search needs it (semantic mode, filters, sorting or facets). Try again in ${INDEX_RETRY_AFTER_SECONDS} seconds; a natural or boolean search without them is answered by the databases themselves meanwhile.`,
    { retryAfter: INDEX_RETRY_AFTER_SECONDS },
    { retryAfterSeconds: INDEX_RETRY_AFTER_SECONDS },
  );
}

/** 409 SEMANTIC_INDEX_REQUIRED: a semantic search none of whose selected tables is searched by meaning yet. */
export function semanticIndexRequired(notIndexed: NotSemantic[]): AppError {
  const names = notIndexed.slice(0, 5).map((t) => t.table).join(', ');
  return new AppError(
    'SEMANTIC_INDEX_REQUIRED',
    notIndexed.length === 0
      ? 'No table of the selected databases is searched by meaning. Turn semantic search on for a table: PATCH /api/v1/databases/{databaseId}/index/tables/{table} with {"semantic": true}.'
      : `No selected table is searched by meaning yet (${names}${notIndexed.length > 5 ? ', ...' : ''}). Turn semantic search on for them (PATCH /api/v1/databases/{databaseId}/index/tables/{table}), or search in natural mode.`,
    { notIndexed },
  );
}
