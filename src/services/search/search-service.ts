/**
 * searchDatabases (POST /api/v1/search): one query over several connected databases.
 *
 * Tables synced into Quarry's own search index (src/search-index) are answered from it: one query per search space
 * ranks every selected indexed table of every database at once, by BM25 in one statistics space (natural), by
 * vector similarity (semantic), or both fused (hybrid), without contacting the source databases. Tables the index
 * does not answer — not synced yet, on a connection with indexing off, in boolean mode, under a `columns` selection,
 * or when the caller asks for `live` results — are searched live by their database's own full-text search
 * (live-search.ts), in parallel and within SEARCH_TIMEOUT_MS. When both kinds take part, the index's ranking and each
 * live table's ranking are merged by reciprocal rank fusion and the answer says the order is approximate.
 *
 * Paging: every source returns its top (offset + limit) rows, so the merged order never depends on the page size
 * asked before it. A database that fails or runs out of time is reported in `databases` and never fails the search;
 * a natural or boolean page is cached only when every database answered. Every search, cached or not, is recorded.
 */
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/openapi.js';
import type { TableSchema } from '../../connectors/index.js';
import { AppError } from '../../errors/app-error.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import type { ResultCache } from './result-cache.js';
import { decodeCursor, encodeCursor, searchFingerprint } from '../../sql-search/cursor.js';
import { compileQuery } from '../../sql-search/queries.js';
import { fuse, type Ranked } from '../../sql-search/rrf.js';
import type { CompiledQuery, HitDetail as LiveDetail, RankedRow } from '../../sql-search/types.js';
import { indexTextQuery, queryStems } from '../../search-index/analyzer.js';
import { contentTables, indexableProblem, tableId } from '../../search-index/documents.js';
import { hitDetails, searchIndex, type HitDetail, type IndexedSource, type IndexSearchResult } from '../../search-index/index-search.js';
import { spaceName, type IndexHit, type IndexStore } from '../../search-index/index-store.js';
import type { Correction } from '../../search-index/typos.js';
import { indexedColumns } from '../../search-index/filter-columns.js';
import type { KeyCaller } from '../callers.js';
import { searchScope } from '../keys/publishable-keys.js';
import { needsIndex, refine, type RefinableSource } from './search-refinements.js';
import type { DatabaseService } from '../databases/database-service.js';
import { assertFanOut, firstDatabases } from './search-fan-out.js';
import { keyText, LiveSearch, targetName, type LiveOutcome, type TableOutcome } from './live-search.js';
import type { SearchRecorder } from './search-recorder.js';

type SearchRequest = components['schemas']['SearchRequest'];
type SearchData = components['schemas']['SearchResponse']['data'];
type SearchResult = components['schemas']['SearchResult'];
type LiveReason = components['schemas']['LiveTable']['reason'];
type NotSemantic = NonNullable<SearchData['semanticUnindexedTables']>[number];

/** The contract's bounds (SearchRequest): offset at most 1000, offset + limit at most 1100. */
export const MAX_OFFSET = 1000;
export const MAX_WINDOW = 1100;
export const DEFAULT_LIMIT = 20;
/** Weight of the vector ranking in hybrid search when the request does not set `semanticRatio`. */
export const DEFAULT_SEMANTIC_RATIO = 0.25;

export interface SearchDeps {
  databases: Pick<DatabaseService, 'owned' | 'executorFor' | 'tablesOf'>;
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  recorder: Pick<SearchRecorder, 'record'>;
  cache: ResultCache;
  /** Signs cursors (derived from a server secret). */
  cursorSecret: Buffer;
  /** Link given when a search names more databases than the plan allows. */
  upgradeUrl: string;
  /** Per-database budget of one search (SEARCH_TIMEOUT_MS). */
  timeoutMs: number;
  /** Unexpected failures (bugs), logged; the caller sees a safe error per database. */
  onError(error: unknown): void;
  index: {
    store: Pick<IndexStore, 'space'>;
    indexedTables(connectionIds: string[]): Promise<{ tables: IndexTableRecord[]; liveJobs: IndexJobRecord[] }>;
    /** The embedding model semantic tables must be indexed with to be searched by meaning. */
    providerId: string;
  };
  /** Counts one AI request against the key's hourly limit, then embeds the query (semantic and hybrid). */
  embedQuery(caller: KeyCaller, text: string): Promise<Float32Array>;
  now?: () => number;
}

/** How one database is searched: which of its selected tables the index answers and which are searched live. */
interface DatabasePlan {
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

type Candidate = Ranked & { plan: DatabasePlan } & (
  | { kind: 'index'; hit: IndexHit; source: IndexedSource; detail?: HitDetail }
  | { kind: 'live'; outcome: LiveOutcome; table: TableOutcome; row: RankedRow }
);

interface Answer {
  page: Array<{ item: Candidate; score: number }>;
  total: number;
  totalIsEstimate: boolean;
  approximate: boolean;
}

function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `The request is invalid: body${path} ${message}.`, { errors: [{ location: 'body', path, message }] });
}

/** A table named by the request's `tables` filter: its bare name or `schema.table`. */
function selected(table: TableSchema, names: string[] | null | undefined): boolean {
  if (!names || names.length === 0) return true;
  return names.includes(table.name) || (table.schema !== null && table.schema !== undefined && names.includes(`${table.schema}.${table.name}`));
}

export class SearchService {
  private readonly now: () => number;
  private readonly live: LiveSearch;

  constructor(private readonly deps: SearchDeps) {
    this.now = deps.now ?? Date.now;
    this.live = new LiveSearch({ databases: deps.databases, onError: deps.onError, now: this.now, timeoutMs: deps.timeoutMs });
  }

  /** searchDatabases */
  async search(caller: KeyCaller, request: SearchRequest): Promise<SearchData> {
    const started = this.now();
    const mode = request.searchMode ?? 'natural';
    // Hybrid's text half reads the query as natural mode does; semantic mode only embeds it.
    const { query, excludedOnly } = compileQuery(request.query, mode === 'boolean' ? 'boolean' : 'natural');
    if (query.text === '') throw invalid('/query', 'must contain a word');
    if (excludedOnly && mode !== 'semantic') throw invalid('/query', 'needs at least one word that is not excluded (-word): nothing can match only exclusions');
    const limit = request.limit ?? DEFAULT_LIMIT;
    const semanticRatio = request.semanticRatio ?? DEFAULT_SEMANTIC_RATIO;
    // A publishable key searches only its own databases and tables (services/keys/publishable-keys.ts).
    const scope = searchScope(caller.key, request);
    request = { ...request, tables: scope.tables };
    const { records, all: everyConnection } = await this.selectConnections(caller, scope.databases, scope.keyDefault);
    const typoTolerance = request.typoTolerance ?? true;
    const fingerprint = searchFingerprint({
      u: caller.user.id, e: caller.key.environment, q: query.text, m: mode, l: request.live === true, r: mode === 'hybrid' ? semanticRatio : null,
      d: [...(request.databases ?? [])].sort(), t: [...(request.tables ?? [])].sort(), c: [...(request.columns ?? [])].sort(),
      f: request.filter ?? null, s: request.sort ?? null, a: request.facets ?? null, w: request.databaseWeights ?? null, y: typoTolerance,
    });
    const offset = request.cursor !== undefined ? this.cursorOffset(request.cursor, fingerprint) : (request.offset ?? 0);
    if (offset + limit > MAX_WINDOW) throw invalid('/offset', `plus limit may not exceed ${MAX_WINDOW} (offset ${offset} + limit ${limit})`);
    const top = offset + limit;

    const plans = await this.plan(records, request, mode);
    // Semantic and hybrid answers are never cached: each counts an AI request. A page is keyed by every connection's
    // version and the last sync of each of its indexed tables, so a sync finished by any process is seen at once.
    const cacheKey = this.deps.cache.enabled && (mode === 'natural' || mode === 'boolean')
      ? createHash('sha256').update(JSON.stringify({
        fingerprint, offset, limit, d: plans.map((p) => [p.record.id, p.record.updatedAt.getTime(), p.syncedAt]),
      })).digest('base64url')
      : null;
    const cached = cacheKey ? await this.deps.cache.get(cacheKey) : null;
    if (cached) {
      const entry = JSON.parse(cached) as { data: SearchData; tables: string[] };
      const data = { ...entry.data, tookMs: Math.max(0, Math.round(this.now() - started)) };
      this.record(caller, data, records, entry.tables, 'ok');
      return data;
    }

    const deadline = started + this.deps.timeoutMs;
    const tableOf = new Map(plans.flatMap((p) => p.sources.map((s) => [s.src, { databaseId: p.record.id, table: s.tableName }] as const)));
    const refined = refine(request, plans.flatMap((p) => p.sources), records.map((r) => r.id), (src) => tableOf.get(src)!);
    const sources = refined.sources;
    const byIndexOnly = needsIndex(request);
    const excluded = [
      ...refined.excluded,
      // Filters, sorting and facets read the index: tables searched live are left out of such a search.
      ...(byIndexOnly ? plans.flatMap((p) => p.live.map((t) => ({ databaseId: p.record.id, table: t.table, reason: 'not_indexed' as const }))) : []),
    ];
    const notSemantic = plans.flatMap((p) => p.notSemantic);
    const semanticSources = sources.filter((s) => s.semanticReady);
    if (mode === 'semantic' && semanticSources.length === 0) throw semanticIndexRequired(notSemantic);
    const vector = mode !== 'natural' && mode !== 'boolean' && semanticSources.length > 0 ? await this.deps.embedQuery(caller, query.text) : null;

    const space = spaceName(caller.user.id, caller.key.environment);
    const livePlans = mode === 'semantic' || byIndexOnly ? [] : plans.filter((p) => p.searchLive);
    const indexStarted = this.now();
    const [indexed, liveOutcomes] = await Promise.all([
      searchIndex(this.deps.index.store, {
        space, sources, mode: mode === 'boolean' ? 'natural' : mode, text: indexTextQuery(query), vector, window: top, semanticRatio,
        // Every connection of the environment, every table: no filter (a publishable key's or a plan's cap may leave some out).
        wholeSpace: everyConnection && plans.every((p) => p.wholeIndex) && (request.tables ?? []).length === 0,
        where: refined.where, sort: refined.sort, facets: refined.facets, weights: refined.weights, typoTolerance,
      }),
      Promise.all(livePlans.map((plan) => this.live.search(plan.record, query, request, plan.indexedNames, {
        offset, limit, top, lists: livePlans.length + (sources.length > 0 ? 1 : 0),
      }, deadline))),
    ]);
    const indexTookMs = Math.max(0, Math.round(this.now() - indexStarted));

    const answer = this.merge(plans, sources, indexed, liveOutcomes, offset, limit);
    await this.fillDetails(answer.page.map((p) => p.item), space, sources, highlightStems(query, indexed.corrections), deadline);

    const data = this.pageData({
      request, mode, answer, offset, limit, started, plans, liveOutcomes, indexed, indexTookMs, notSemantic, excluded,
      nextCursor: () => encodeCursor(this.deps.cursorSecret, fingerprint, top),
    });
    const tables = [...new Set([
      ...sources.map((s) => s.tableName),
      ...liveOutcomes.flatMap((o) => o.tables.map((t) => targetName(t.queries.target))),
    ])];
    const failed = liveOutcomes.filter((o) => o.status !== 'ok').length;
    const status = failed === 0 ? 'ok' : failed === plans.length ? 'error' : 'partial';
    if (status === 'ok' && cacheKey) await this.deps.cache.set(cacheKey, JSON.stringify({ data, tables }), records.map((r) => r.id));
    this.record(caller, data, records, tables, status);
    return data;
  }

  /** A connection changed or went (or its index was synced): its schema and every cached page that read it are stale. */
  forget(databaseId: string): void {
    this.live.forget(databaseId);
    this.deps.cache.forgetDatabase(databaseId).catch((error: unknown) => this.deps.onError(error));
  }

  /** A connection's pooled executor and live search schema (suggestions sample words through it). */
  schemaOf(record: DatabaseConnectionRecord, deadline: number) {
    return this.live.schemaOf(record, deadline);
  }

  close(): Promise<void> {
    return this.deps.cache.close();
  }

  /**
   * Which selected tables of each database the index answers: those with a finished sync, unless the connection's
   * indexing is off, the caller asked for live results, the search selects columns, or the mode is boolean (the
   * index matches words, not phrases or prefixes). The rest are searched live.
   */
  private async plan(records: DatabaseConnectionRecord[], request: SearchRequest, mode: SearchData['searchMode']): Promise<DatabasePlan[]> {
    const { tables: indexed, liveJobs } = await this.deps.index.indexedTables(records.map((r) => r.id));
    return Promise.all(records.map(async (record): Promise<DatabasePlan> => {
      const plan: DatabasePlan = { record, sources: [], live: [], indexedNames: new Set(), indexedAt: null, searchLive: false, notSemantic: [], wholeIndex: false, syncedAt: [] };
      let schema: TableSchema[];
      try {
        schema = await this.deps.databases.tablesOf(record);
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
        plan.notSemantic.push(...this.semanticGap(record, name, entry, running));
        if (everyTable === null && entry?.syncedAt) {
          plan.sources.push({
            src: entry.id, connectionId: record.id, tableName: name,
            keyColumns: entry.keyColumns ?? table.primaryKey, textColumns: entry.textColumns ?? table.textColumns,
            semanticReady: entry.semantic && entry.vectorModel === this.deps.index.providerId,
            filterable: indexedColumns(table, entry.filterableColumns ?? []),
            sortable: indexedColumns(table, entry.sortableColumns ?? []),
          });
          plan.indexedNames.add(name);
          plan.syncedAt.push(entry.syncedAt.getTime());
          const asOf = entry.syncStartedAt ?? entry.syncedAt;
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

  /** Why a selected table is not in the semantic ranking, or nothing when it is. */
  private semanticGap(record: DatabaseConnectionRecord, table: string, entry: IndexTableRecord | undefined, syncing: boolean): NotSemantic[] {
    const turnOn = `Turn semantic search on for it: PATCH /api/v1/databases/${record.id}/index/tables/${encodeURIComponent(table)} with {"semantic": true}.`;
    if (!entry?.semantic) return [{ databaseId: record.id, table, reason: 'never_indexed', message: `This table is not searched by meaning. ${turnOn}` }];
    if (entry.syncedAt && entry.vectorModel === this.deps.index.providerId) return [];
    if (syncing) return [{ databaseId: record.id, table, reason: 'indexing', message: 'The table is being synced with embeddings; it is searched by meaning once the sync finishes.' }];
    if (entry.vectorModel && entry.vectorModel !== this.deps.index.providerId) {
      return [{ databaseId: record.id, table, reason: 'model_changed', message: 'The table was embedded with another model; sync it again (POST .../index/sync).' }];
    }
    return [{ databaseId: record.id, table, reason: 'never_indexed', message: 'The table has no finished sync yet; sync it (POST .../index/sync).' }];
  }

  /**
   * One ranking: the index's alone when no table is searched live (scores are comparable inside it); otherwise the
   * index's ranking and every live table's ranking merged by reciprocal rank fusion, which is approximate.
   */
  private merge(plans: DatabasePlan[], sources: IndexedSource[], indexed: IndexSearchResult, live: LiveOutcome[], offset: number, limit: number): Answer {
    const planOf = new Map(plans.map((p) => [p.record.id, p]));
    const sourceOf = new Map(sources.map((s) => [s.src, s]));
    const indexList: Candidate[] = indexed.hits.map((hit, i) => {
      const source = sourceOf.get(hit.src)!;
      return { kind: 'index', id: `i:${hit.rid}`, rank: i + 1, hit, source, plan: planOf.get(source.connectionId)! };
    });
    const liveLists: Candidate[][] = live.flatMap((outcome) => outcome.tables.map((table) => table.ranking.rows.map((row, i): Candidate => ({
      kind: 'live', id: `${outcome.record.id}:${targetName(table.queries.target)}:${keyText(row.keys)}`, rank: i + 1,
      outcome, table, row, plan: planOf.get(outcome.record.id)!,
    }))));
    const liveTotal = live.reduce((sum, o) => sum + o.tables.reduce((s, t) => s + t.ranking.total, 0), 0);
    const liveEstimate = live.some((o) => o.tables.some((t) => t.ranking.totalIsEstimate));
    const total = indexed.total + liveTotal;
    const totalIsEstimate = indexed.totalIsEstimate || liveEstimate;
    if (liveLists.length === 0) {
      return { page: indexList.slice(offset, offset + limit).map((item) => ({ item, score: item.kind === 'index' ? item.hit.score : 0 })), total, totalIsEstimate, approximate: false };
    }
    const fused = fuse(indexList.length > 0 ? [indexList, ...liveLists] : liveLists);
    return { page: fused.slice(offset, offset + limit), total, totalIsEstimate, approximate: indexList.length > 0 || liveLists.length > 1 };
  }

  /** Fields and snippets of the page: index rows from the index, live rows from their databases where missing. */
  private async fillDetails(page: Candidate[], space: string, sources: IndexedSource[], stems: Set<string>, deadline: number): Promise<void> {
    const fromIndex = page.filter((c): c is Extract<Candidate, { kind: 'index' }> => c.kind === 'index');
    const fromLive = page.filter((c): c is Extract<Candidate, { kind: 'live' }> => c.kind === 'live');
    const [details] = await Promise.all([
      hitDetails(this.deps.index.store, space, fromIndex.map((c) => c.hit), sources, stems),
      this.live.fillDetails(fromLive.map((c) => ({ database: c.outcome, table: c.table, row: c.row })), deadline),
    ]);
    for (const candidate of fromIndex) candidate.detail = details.get(candidate.hit.rid);
  }

  /**
   * The connections a search reads: the named ones (an unknown or another user's id is 404, another environment's
   * 401), or with none named those of the key's environment; at most the plan's databases per search either way
   * (search-fan-out.ts). `keyDefault`: the ids are a publishable key's own list, so one deleted since the key was
   * made is left out rather than failing every search. `all`: every connection of the environment is read.
   */
  private async selectConnections(caller: KeyCaller, ids: string[], keyDefault = false): Promise<{ records: DatabaseConnectionRecord[]; all: boolean }> {
    const environment = caller.key.environment;
    if (keyDefault || ids.length === 0) {
      const every = await this.deps.connections.listOwned(caller.user.id, environment);
      const own = new Set(ids);
      const records = firstDatabases(caller.user, keyDefault ? every.filter((record) => own.has(record.id)) : every);
      return { records, all: records.length === every.length };
    }
    assertFanOut(caller.user, ids, this.deps.upgradeUrl);
    const records: DatabaseConnectionRecord[] = [];
    for (const id of ids) {
      const record = await this.deps.databases.owned(caller.user.id, id);
      if (record.environment !== environment) {
        throw new AppError('KEY_ENVIRONMENT_MISMATCH', `This is a ${environment} key; database ${id} is a ${record.environment} connection.`, {
          databaseId: id, keyEnvironment: environment, databaseEnvironment: record.environment,
        });
      }
      records.push(record);
    }
    return { records, all: false };
  }

  private cursorOffset(cursor: string, fingerprint: string): number {
    const offset = decodeCursor(this.deps.cursorSecret, fingerprint, cursor, MAX_OFFSET);
    if (offset === null) throw invalid('/cursor', 'is not a nextCursor of this search (it was changed, or belongs to another query or caller)');
    return offset;
  }

  /** The response page: results, totals, paging, each database's status and how its tables were searched. */
  private pageData(p: {
    request: SearchRequest;
    mode: SearchData['searchMode'];
    answer: Answer;
    offset: number;
    limit: number;
    nextCursor: () => string;
    started: number;
    plans: DatabasePlan[];
    liveOutcomes: LiveOutcome[];
    indexed: IndexSearchResult;
    indexTookMs: number;
    notSemantic: NotSemantic[];
    excluded: SearchData['excludedTables'];
  }): SearchData {
    const { answer, offset, limit } = p;
    const hasMore = offset + answer.page.length < answer.total;
    const outcomeOf = new Map(p.liveOutcomes.map((o) => [o.record.id, o]));
    const results = answer.page.flatMap(({ item, score }, i) => this.result(item, score, offset + i + 1) ?? []);
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
      tookMs: Math.max(0, Math.round(this.now() - p.started)),
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
          approximate: Boolean(outcome) && (answer.approximate || (outcome?.tables.some((t) => t.ranking.approximate) ?? false)),
        };
      }),
      unindexedTables: p.liveOutcomes.flatMap((o) => o.tables.filter((t) => t.queries.target.index === null)
        .map((t) => ({ databaseId: o.record.id, table: targetName(t.queries.target) }))),
      liveTables: p.mode === 'semantic' || p.excluded.some((t) => t.reason === 'not_indexed') ? []
        : p.plans.flatMap((plan) => plan.live.map((t) => ({ databaseId: plan.record.id, ...t }))),
      excludedTables: p.excluded,
      corrections: p.indexed.corrections,
    };
    if ((p.request.facets?.length ?? 0) > 0) {
      data.facets = p.indexed.facets as NonNullable<SearchData['facets']>;
      data.facetsAreEstimate = p.indexed.totalIsEstimate;
    }
    if (p.mode === 'semantic' || p.mode === 'hybrid') data.semanticUnindexedTables = p.notSemantic;
    return data;
  }

  /** A page row as a result; an index row whose stored copy vanished meanwhile (a sync removed it) is left out. */
  private result(candidate: Candidate, score: number, rank: number): SearchResult | null {
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

  private record(caller: KeyCaller, data: SearchData, records: DatabaseConnectionRecord[], tables: string[], status: 'ok' | 'partial' | 'error'): void {
    this.deps.recorder.record({
      userId: caller.user.id,
      keyId: caller.key.id,
      // Neither store keeps NUL in text (and one such row would fail the whole batch).
      query: data.query.replace(/\u0000/g, ''),
      searchMode: data.searchMode,
      databases: records.map((r) => r.id),
      tables,
      resultCount: data.total,
      responseTimeMs: data.tookMs,
      status,
      unindexedTables: data.unindexedTables.length > 0 ? data.unindexedTables : null,
      createdAt: new Date(this.now()),
    });
  }
}

/** A key value as JSON carries it (the live path's engines return dates, big integers and bytes). */
function plainKey(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

/** The stems snippets mark: the query's words, and the words typo tolerance searched instead of misspelt ones. */
function highlightStems(query: CompiledQuery, corrections: Correction[]): Set<string> {
  return queryStems([indexTextQuery(query).words, ...corrections.map((c) => c.correctedTo)].join(' '));
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
