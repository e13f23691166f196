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
 * This file is the order of a search; each step has its own file: the request read and bounded (search-request.ts),
 * the connections it reads (search-fan-out.ts), how each database is read (search-plan.ts), the index and the live
 * databases asked at once, one ranking from their answers (search-merge.ts), the response page (search-page.ts) and
 * the record of the search (search-recorder.ts). A database that fails or runs out of time is reported in
 * `databases` and never fails the search; a natural or boolean page is cached only when every database answered.
 * Every search, cached or not, is recorded.
 */
import { lagSeconds } from '../../search-index/changes/freshness.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import { encodeCursor } from '../../sql-search/cursor.js';
import { relaxedQueries } from '../../sql-search/queries.js';
import type { Relaxation } from '../../sql-search/relaxation.js';
import type { CompiledQuery } from '../../sql-search/types.js';
import { indexTextQuery, queryStems } from '../../search-index/analyzer.js';
import { RM3 } from '../../search-index/feedback.js';
import { hitDetails, searchIndex, type IndexedSource } from '../../search-index/index-search.js';
import { spaceName, type IndexStore } from '../../search-index/index-store.js';
import { isIndexStorageFailure } from '../../search-index/storage-failures.js';
import type { Correction } from '../../search-index/typos.js';
import type { KeyCaller } from '../callers.js';
import type { DatabaseService } from '../databases/database-service.js';
import { searchScope } from '../../rules/key-scope.js';
import { LiveSearch, targetName } from './live-search.js';
import type { ResultCache } from './result-cache.js';
import { selectConnections } from './search-fan-out.js';
import { merge, type Candidate } from './search-merge.js';
import { pageData } from './search-page.js';
import { INDEX_RETRY_AFTER_SECONDS, indexUnavailable, planSearch, semanticIndexRequired, withoutIndex } from './search-plan.js';
import { searchRecordOf, type SearchRecorder } from './search-recorder.js';
import { needsIndex, refine } from './search-refinements.js';
import { pageCacheKey, readPage, readQuery, type SearchData, type SearchRequest } from './search-request.js';
import { StageTimer } from '../../lib/stage-timer.js';

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

export class SearchService {
  private readonly now: () => number;
  private readonly live: LiveSearch;
  /** The index's storage failed a search: until then, searches are answered without it. */
  private indexDownUntil = 0;

  constructor(private readonly deps: SearchDeps) {
    this.now = deps.now ?? Date.now;
    this.live = new LiveSearch({ databases: deps.databases, onError: deps.onError, now: this.now, timeoutMs: deps.timeoutMs });
  }

  /** searchDatabases; `timer` learns where the time went (the answer's Server-Timing). */
  async search(caller: KeyCaller, request: SearchRequest, timer: StageTimer = new StageTimer()): Promise<SearchData> {
    const started = this.now();
    let planStarted = performance.now();
    const asked = readQuery(request);
    const { mode, query, limit, semanticRatio } = asked;
    // A publishable key searches only its own databases and tables (services/keys/publishable-keys.ts).
    const scope = searchScope(caller.key, request);
    request = { ...request, tables: scope.tables };
    const { records, all: everyConnection } = await selectConnections(this.deps, caller, scope.databases, scope.keyDefault);
    const page = readPage(caller, request, asked, this.deps.cursorSecret);
    const { offset, top } = page;

    let plans = await planSearch({
      tablesOf: (record) => this.deps.databases.tablesOf(record),
      indexedTables: (ids) => this.deps.index.indexedTables(ids),
      providerId: this.deps.index.providerId,
    }, records, request, mode);
    const cacheKey = this.deps.cache.enabled ? pageCacheKey(page, limit, mode, plans) : null;
    timer.add('plan', performance.now() - planStarted);
    const cached = cacheKey ? await timer.time('cache', () => this.deps.cache.get(cacheKey)) : null;
    planStarted = performance.now();
    if (cached) {
      const entry = JSON.parse(cached) as { data: SearchData; tables: string[] };
      const now = this.now();
      // A cached page's rows are as old as they were; its lag is measured again to now.
      const databases = entry.data.databases.map((d) => ({ ...d, lagSeconds: lagSeconds(d.indexedAt ? new Date(d.indexedAt) : null, now) }));
      const data = { ...entry.data, databases, tookMs: Math.max(0, Math.round(now - started)) };
      this.deps.recorder.record(searchRecordOf(caller, data, records, entry.tables, 'ok', this.now()));
      return data;
    }

    let deadline = started + this.deps.timeoutMs;
    const tableOf = new Map(plans.flatMap((p) => p.sources.map((s) => [s.src, { databaseId: p.record.id, table: s.tableName }] as const)));
    const refined = refine(request, plans.flatMap((p) => p.sources), records.map((r) => r.id), (src) => tableOf.get(src)!);
    let sources = refined.sources;
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

    // The index and every live database are asked at once; each ranks its top (offset + limit) rows.
    const space = spaceName(caller.user.id, caller.key.environment);
    let livePlans = mode === 'semantic' || byIndexOnly ? [] : plans.filter((p) => p.searchLive);
    const ask = async (words: CompiledQuery) => {
      const [indexed, liveOutcomes] = await Promise.all([
        searchIndex(this.deps.index.store, {
          space, sources, mode: mode === 'boolean' ? 'natural' : mode, text: indexTextQuery(words), vector, window: top, semanticRatio,
          // Every connection of the environment, every table: no filter (a publishable key's or a plan's cap may leave some out).
          wholeSpace: everyConnection && plans.every((p) => p.wholeIndex) && (request.tables ?? []).length === 0,
          where: refined.where, sort: refined.sort, facets: refined.facets, weights: refined.weights, typoTolerance: page.typoTolerance,
          exactTotal: page.exactTotal, feedback: page.queryExpansion ? RM3 : null,
          rerank: page.relevanceFeedback ? RM3 : null, timer,
        }),
        Promise.all(livePlans.map((plan) => this.live.search(plan.record, words, request, plan.indexedNames, {
          offset, limit, top, lists: livePlans.length + (sources.length > 0 ? 1 : 0),
        }, deadline))),
      ]);
      return { words, indexed, liveOutcomes, answer: merge(plans, sources, indexed, liveOutcomes, offset, limit), relaxed: [] as Relaxation[] };
    };
    const answerQuery = async () => {
      let found = await ask(query);
      // Never empty while words match: only a query that found nothing is read more loosely, step by
      // step, within the same deadline, and the answer says what it gave up. Semantic search reads no words.
      if (found.answer.total === 0 && mode !== 'semantic') {
        for (const looser of relaxedQueries(query)) {
          const next = await ask(looser.query);
          if (next.answer.total === 0) continue;
          found = { ...next, relaxed: looser.relaxed };
          break;
        }
      }
      return found;
    };
    // The index's storage is down: each database's tables are searched live, as the answer says
    // (liveTables, reason index_unavailable), within a budget of their own; what only the index can answer is 503
    // with Retry-After. Once it failed, the index is not asked again for INDEX_RETRY_AFTER_SECONDS.
    const withoutTheIndex = () => {
      if (mode === 'semantic' || byIndexOnly) throw indexUnavailable();
      plans = plans.map(withoutIndex);
      sources = [];
      livePlans = plans.filter((p) => p.searchLive);
      deadline = this.now() + this.deps.timeoutMs;
    };
    const indexDown = sources.length > 0 && this.now() < this.indexDownUntil;
    if (indexDown) withoutTheIndex();
    timer.add('plan', performance.now() - planStarted);
    const indexStarted = this.now();
    const rankStarted = performance.now();
    let found;
    try {
      found = await answerQuery();
    } catch (error) {
      if (sources.length === 0 || !isIndexStorageFailure(error)) throw error;
      this.deps.onError(error);
      this.indexDownUntil = this.now() + INDEX_RETRY_AFTER_SECONDS * 1000;
      withoutTheIndex();
      found = await answerQuery();
    }
    const answeredLive = indexDown || this.now() < this.indexDownUntil;
    const { indexed, liveOutcomes, answer } = found;
    const indexTookMs = Math.max(0, Math.round(this.now() - indexStarted));
    timer.add('rank', performance.now() - rankStarted);

    await timer.time('details', () => this.fillDetails(answer.page.map((p) => p.item), space, sources, highlightStems(found.words, indexed.corrections), deadline));

    const data = pageData({
      request, mode, answer, offset, limit, plans, liveOutcomes, indexed, indexTookMs, notSemantic, excluded, relaxed: found.relaxed,
      tookMs: Math.max(0, Math.round(this.now() - started)),
      now: this.now(),
      nextCursor: () => encodeCursor(this.deps.cursorSecret, page.fingerprint, top),
    });
    const tables = [...new Set([
      ...sources.map((s) => s.tableName),
      ...liveOutcomes.flatMap((o) => o.tables.map((t) => targetName(t.queries.target))),
    ])];
    const failed = liveOutcomes.filter((o) => o.status !== 'ok').length;
    const status = failed === 0 ? 'ok' : failed === plans.length ? 'error' : 'partial';
    if (status === 'ok' && !answeredLive && cacheKey) await this.deps.cache.set(cacheKey, JSON.stringify({ data, tables }), records.map((r) => r.id));
    this.deps.recorder.record(searchRecordOf(caller, data, records, tables, status, this.now()));
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
}

/** The stems snippets mark: the query's words, and the words typo tolerance searched instead of misspelt ones. */
function highlightStems(query: CompiledQuery, corrections: Correction[]): Set<string> {
  return queryStems([indexTextQuery(query).words, ...corrections.map((c) => c.correctedTo)].join(' '));
}
