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
 * This file is the order of a search, as the product works; each step has its own file: the request read and bounded
 * (search-request.ts), the connections it reads (search-fan-out.ts), which engine reads each table (search-plan.ts,
 * from the catalog: search-catalog.ts), each engine's plan of its part and every engine ranking it at once (search-core/
 * engine.ts: the index, src/search-index/index-engine.ts, and the live databases, live-search.ts), one ranking fused
 * from their lists (search-merge.ts), the details of the page's rows from the engine of each, the response page
 * (search-page.ts) and the record of the search (search-recorder.ts). A database that fails or runs out of time is reported in
 * `databases` and never fails the search; a natural or boolean page is cached only when every database answered.
 * Every search, cached or not, is recorded.
 */
import { lagSeconds } from '../../search-index/changes/freshness.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import { encodeCursor } from '../../search-core/cursor.js';
import type { DetailAsk, Engine, EnginePlan, PageWindow, Ranking, ResultRow } from '../../search-core/engine.js';
import { relaxedQueries, type CompiledQuery } from '../../search-core/query.js';
import type { IndexPlan, IndexSearch } from '../../search-index/index-engine.js';
import { spaceName } from '../../search-index/index-store.js';
import { isIndexStorageFailure } from '../../search-index/storage-failures.js';
import type { KeyCaller } from '../callers.js';
import type { DatabaseService } from '../databases/database-service.js';
import { searchScope } from '../../rules/key-scope.js';
import type { LivePlan, LiveSearch } from './live-search.js';
import type { ResultCache } from './result-cache.js';
import type { SearchCatalog } from './search-catalog.js';
import { selectConnections } from './search-fan-out.js';
import { merge, type Answer } from './search-merge.js';
import { pageData, type Found } from './search-page.js';
import { INDEX_RETRY_AFTER_SECONDS, indexUnavailable, planSearch, routeSearch, routeWithoutIndex, semanticIndexRequired, type SearchRoute } from './search-plan.js';
import { searchRecordOf, type SearchRecorder } from './search-recorder.js';
import { refine } from './search-refinements.js';
import { pageCacheKey, readPage, readQuery, type SearchData, type SearchRequest } from './search-request.js';
import { StageTimer } from '../../lib/stage-timer.js';

/** The engines a search asks: Quarry's index and the users' databases searched live. */
export interface SearchEngines {
  index: Engine<IndexSearch, IndexPlan, unknown>;
  live: Engine<LiveSearch, LivePlan, unknown>;
}

/** The search's route and each engine's part of it, as the engine planned it. */
interface Planned {
  route: SearchRoute;
  index: IndexPlan;
  live: LivePlan;
}

export interface SearchDeps {
  databases: Pick<DatabaseService, 'owned'>;
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  /** What search knows of each database: its tables, full-text indexes and index state. */
  catalog: Pick<SearchCatalog, 'tables' | 'indexState'>;
  engines: SearchEngines;
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
  /** The embedding model semantic tables must be indexed with to be searched by meaning. */
  providerId: string;
  /** Counts one AI request against the key's hourly limit, then embeds the query (semantic and hybrid). */
  embedQuery(caller: KeyCaller, text: string): Promise<Float32Array>;
  now?: () => number;
}

type Asked = ReturnType<typeof readQuery>;

/** Every engine's ranking of one reading of the query, and the page fused from them. */
interface Ranked {
  words: CompiledQuery;
  rankings: Array<Ranking<unknown>>;
  answer: Answer;
  relaxed: SearchData['relaxed'];
}

export class SearchService {
  private readonly now: () => number;
  /** The index's storage failed a search: until then, searches are answered without it. */
  private indexDownUntil = 0;

  constructor(private readonly deps: SearchDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * searchDatabases: select connections -> route each table to an engine -> each engine plans its part -> every
   * engine ranks at once -> fuse -> details of the page's rows -> the page. `timer` learns where the time went (the answer's Server-Timing).
   */
  async search(caller: KeyCaller, request: SearchRequest, timer: StageTimer = new StageTimer()): Promise<SearchData> {
    const started = this.now();
    let planStarted = performance.now();
    const asked = readQuery(request);
    // A publishable key searches only its own databases and tables (services/keys/publishable-keys.ts).
    const scope = searchScope(caller.key, request);
    request = { ...request, tables: scope.tables };
    const { records, all } = await selectConnections(this.deps, caller, scope.databases, scope.keyDefault);
    const page = readPage(caller, request, asked, this.deps.cursorSecret);
    const plans = await planSearch({ catalog: this.deps.catalog, providerId: this.deps.providerId }, records, request, asked.mode);
    const cacheKey = this.deps.cache.enabled ? pageCacheKey(page, asked.limit, asked.mode, plans) : null;
    timer.add('plan', performance.now() - planStarted);
    const cached = cacheKey ? await timer.time('cache', () => this.deps.cache.get(cacheKey)) : null;
    if (cached) return this.fromCache(caller, cached, records, started);

    planStarted = performance.now();
    const refined = refine(request, plans.flatMap((p) => p.sources), records.map((r) => r.id), tableOf(plans));
    let planned = this.planned(routeSearch(plans, request, refined, {
      mode: asked.mode, semanticRatio: asked.semanticRatio, page, space: spaceName(caller.user.id, caller.key.environment), everyConnection: all, timer,
    }));
    const vector = await this.embedding(caller, asked, planned);
    let deadline = started + this.deps.timeoutMs;
    // The index's storage is down: each database's tables are searched live, as the answer says (liveTables, reason
    // index_unavailable), within a budget of their own; what only the index can answer is 503 with Retry-After.
    // Once it failed, the index is not asked again for INDEX_RETRY_AFTER_SECONDS.
    const withoutTheIndex = () => {
      if (asked.mode === 'semantic' || planned.route.byIndexOnly) throw indexUnavailable();
      planned = this.planned(routeWithoutIndex(planned.route));
      deadline = this.now() + this.deps.timeoutMs;
    };
    const indexDown = planned.index.sources.length > 0 && this.now() < this.indexDownUntil;
    if (indexDown) withoutTheIndex();
    timer.add('plan', performance.now() - planStarted);

    const window: PageWindow = { offset: page.offset, limit: asked.limit, top: page.top };
    const rankStarted = this.now();
    const rankTimed = performance.now();
    let ranked: Ranked;
    try {
      ranked = await this.rankRelaxing(planned, asked, vector, window, deadline);
    } catch (error) {
      if (planned.index.sources.length === 0 || !isIndexStorageFailure(error)) throw error;
      this.deps.onError(error);
      this.indexDownUntil = this.now() + INDEX_RETRY_AFTER_SECONDS * 1000;
      withoutTheIndex();
      ranked = await this.rankRelaxing(planned, asked, vector, window, deadline);
    }
    const answeredLive = indexDown || this.now() < this.indexDownUntil;
    const rankTookMs = Math.max(0, Math.round(this.now() - rankStarted));
    timer.add('rank', performance.now() - rankTimed);

    const rows = await timer.time('details', () => this.details(planned, ranked, deadline));
    const found: Found = { answer: ranked.answer, rows, rankings: ranked.rankings, relaxed: ranked.relaxed, rankTookMs };
    const data = pageData({
      request, mode: asked.mode, window, route: planned.route, found,
      tookMs: Math.max(0, Math.round(this.now() - started)),
      now: this.now(),
      nextCursor: () => encodeCursor(this.deps.cursorSecret, page.fingerprint, page.top),
    });
    const tables = [...new Set(ranked.rankings.flatMap((r) => r.tables.map((t) => t.table)))];
    const failed = ranked.rankings.reduce((sum, r) => sum + [...r.databases.values()].filter((d) => d.status !== 'ok').length, 0);
    const status = failed === 0 ? 'ok' : failed === plans.length ? 'error' : 'partial';
    if (status === 'ok' && !answeredLive && cacheKey) await this.deps.cache.set(cacheKey, JSON.stringify({ data, tables }), records.map((r) => r.id));
    this.deps.recorder.record(searchRecordOf(caller, data, records, tables, status, this.now()));
    return data;
  }

  /** A connection changed or went (or its index was synced): every cached page that read it is stale. */
  forget(databaseId: string): void {
    this.deps.cache.forgetDatabase(databaseId).catch((error: unknown) => this.deps.onError(error));
  }

  close(): Promise<void> {
    return this.deps.cache.close();
  }

  /** A cached page: its rows are as old as they were; its lag is measured again to now. */
  private fromCache(caller: KeyCaller, cached: string, records: DatabaseConnectionRecord[], started: number): SearchData {
    const entry = JSON.parse(cached) as { data: SearchData; tables: string[] };
    const now = this.now();
    const databases = entry.data.databases.map((d) => ({ ...d, lagSeconds: lagSeconds(d.indexedAt ? new Date(d.indexedAt) : null, now) }));
    const data = { ...entry.data, databases, tookMs: Math.max(0, Math.round(now - started)) };
    this.deps.recorder.record(searchRecordOf(caller, data, records, entry.tables, 'ok', this.now()));
    return data;
  }

  /** Each engine's part of the search, as the engine plans it from the route. */
  private planned(route: SearchRoute): Planned {
    return { route, index: this.deps.engines.index.plan(route), live: this.deps.engines.live.plan(route) };
  }

  /** The query's embedding when some selected table is searched by meaning; semantic mode needs one. */
  private async embedding(caller: KeyCaller, asked: Asked, planned: Planned): Promise<Float32Array | null> {
    const semanticReady = planned.index.sources.some((s) => s.semanticReady);
    if (asked.mode === 'semantic' && !semanticReady) throw semanticIndexRequired(planned.route.notSemantic);
    if (asked.mode === 'natural' || asked.mode === 'boolean' || !semanticReady) return null;
    return this.deps.embedQuery(caller, asked.query.text);
  }

  /**
   * Every engine ranks at once, each its top (offset + limit) rows. Never empty while words match: only a query that
   * found nothing is read more loosely, step by step, within the same deadline, and the answer says what it gave up.
   * Semantic search reads no words.
   */
  private async rankRelaxing(planned: Planned, asked: Asked, vector: Float32Array | null, window: PageWindow, deadline: number): Promise<Ranked> {
    const { index, live } = this.deps.engines;
    const rank = async (words: CompiledQuery, relaxed: SearchData['relaxed']): Promise<Ranked> => {
      const ask = { words, vector, window, deadline };
      const rankings = await Promise.all([
        index.rank(planned.index, { ...ask, mergedWith: planned.live.lists }),
        live.rank(planned.live, { ...ask, mergedWith: planned.index.lists }),
      ]);
      return { words, rankings, answer: merge(rankings, window.offset, window.limit), relaxed };
    };
    const found = await rank(asked.query, []);
    if (found.answer.total > 0 || asked.mode === 'semantic') return found;
    for (const looser of relaxedQueries(asked.query)) {
      const next = await rank(looser.query, looser.relaxed);
      if (next.answer.total > 0) return next;
    }
    return found;
  }

  /** Fields and snippets of the page's rows, each from the engine that ranked it, every engine at once. */
  private async details(planned: Planned, ranked: Ranked, deadline: number): Promise<Array<ResultRow | null>> {
    const ask: DetailAsk = { words: ranked.words, corrections: ranked.rankings.flatMap((r) => r.corrections), deadline };
    const rows: Array<ResultRow | null> = new Array<ResultRow | null>(ranked.answer.page.length).fill(null);
    await Promise.all([
      detailsFrom(this.deps.engines.index, planned.index, ranked.answer, ask, rows),
      detailsFrom(this.deps.engines.live, planned.live, ranked.answer, ask, rows),
    ]);
    return rows;
  }
}

/** The details of the page rows `engine` ranked, written at their places in `rows`. */
async function detailsFrom<Plan extends EnginePlan, Ref>(
  engine: Engine<never, Plan, Ref>, plan: Plan, answer: Answer, ask: DetailAsk, rows: Array<ResultRow | null>,
): Promise<void> {
  const at: number[] = [];
  const refs: Ref[] = [];
  answer.page.forEach(({ item }, i) => {
    if (item.engine !== engine.name) return;
    at.push(i);
    refs.push(item.ref as Ref);
  });
  if (refs.length === 0) return;
  const details = await engine.details(plan, refs, ask);
  details.forEach((detail, j) => (rows[at[j]!] = detail));
}

/** Where an indexed table lives, by its id in the index (what a refinement names a left-out table by). */
function tableOf(plans: SearchRoute['plans']): (src: string) => { databaseId: string; table: string } {
  const tables = new Map(plans.flatMap((p) => p.sources.map((s) => [s.src, { databaseId: p.record.id, table: s.tableName }] as const)));
  return (src) => tables.get(src)!;
}
