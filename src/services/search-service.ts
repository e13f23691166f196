/**
 * searchDatabases (POST /api/v1/search): one query over several connected databases, each with its engine's own
 * full-text search (src/search), in parallel and each within SEARCH_TIMEOUT_MS; merged by reciprocal rank fusion.
 *
 * Paging: every table returns its top (offset + limit) rows, so the merged order of a page never depends on the page
 * size asked before it; snippets and fields are read only for rows that can be on the page (rrf.ts), and any page row
 * still without them gets them in one more statement per table. Totals are true counts (COUNT(*) OVER () on the
 * ranking, which scores every match anyway), except two cases flagged by `totalIsEstimate`: the fallback scan of a
 * table larger than FALLBACK_SCAN_ROWS, and a PostgreSQL expression index with more than COUNT_CAP matches.
 *
 * A database that fails or runs out of time is reported in `databases` and never fails the search; a page is cached
 * only when every database answered. Every search, cached or not, is recorded (SearchRecorder).
 *
 * searchMode semantic and hybrid (issue 7) go through searchByMeaning: the semantic engine (src/semantic) ranks the
 * indexed rows of the same selected tables, their fields come from the same by-key row fetch, and hybrid fuses that
 * ranking with the full-text one. They are never cached (each counts an AI request; index jobs change answers).
 */
import { createHash } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import { isConnectorError, type SqlExecutor } from '../connectors/index.js';
import { AppError } from '../errors/app-error.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../repositories/database-connection-repository.js';
import type { ResultCache } from '../search/cache.js';
import { decodeCursor, encodeCursor, searchFingerprint } from '../search/cursor.js';
import { compileQuery, tableQueries } from '../search/queries.js';
import { firstPossiblePosition, fuse, type Ranked } from '../search/rrf.js';
import { loadSearchSchema, SCHEMA_TTL_MS, type SearchSchema } from '../search/schema-catalog.js';
import { plainValue } from '../search/sql-common.js';
import { chooseTargets, type TargetFilters } from '../search/targets.js';
import { TtlCache } from '../search/ttl-cache.js';
import type { CompiledQuery, HitDetail, RankedRow, SearchTarget, TableQueries, TableRanking } from '../search/types.js';
import { highlightRow, textOf } from '../search/highlight.js';
import { createLikeQueries } from '../search/sql-like.js';
import { semanticIndexRequired, type NotIndexedTable, type SemanticSearchFn, type SemanticSearchResult } from '../semantic/index.js';
import type { KeyCaller } from './callers.js';
import type { DatabaseService } from './database-service.js';
import { assertFanOut, firstDatabases } from './search-fan-out.js';
import type { SearchRecorder } from './search-recorder.js';

type SearchRequest = components['schemas']['SearchRequest'];
type SearchData = components['schemas']['SearchResponse']['data'];
type SearchResult = components['schemas']['SearchResult'];
type DatabaseSearchStatus = components['schemas']['DatabaseSearchStatus'];
type SafeError = { code: string; message: string };

/** The contract's bounds (SearchRequest): offset at most 1000, offset + limit at most 1100. */
export const MAX_OFFSET = 1000;
export const MAX_WINDOW = 1100;
export const DEFAULT_LIMIT = 20;

export interface SearchDeps {
  databases: Pick<DatabaseService, 'owned' | 'executorFor'>;
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
  /** The semantic engine (src/semantic) for searchMode semantic and hybrid; it counts the AI request itself. */
  semantic: SemanticSearchFn;
  now?: () => number;
}

interface TableOutcome {
  queries: TableQueries;
  ranking: TableRanking;
}

interface DatabaseOutcome {
  record: DatabaseConnectionRecord;
  executor: SqlExecutor | null;
  status: DatabaseSearchStatus['status'];
  error: SafeError | null;
  tookMs: number;
  tables: TableOutcome[];
}

interface Candidate extends Ranked {
  database: DatabaseOutcome;
  table: TableOutcome;
  row: RankedRow;
  /** A row found by the semantic engine only: its cosine similarity and the text columns it was embedded from. */
  semantic?: { score: number; textColumns: string[] };
}

/** A database's search targets for the semantic modes (the full-text selection rules), or why it has none. */
interface SemanticTargets {
  outcome: DatabaseOutcome;
  /** By table name as results name it (`schema.table` outside PostgreSQL's public). */
  targets: Map<string, { target: SearchTarget; textColumns: string[] }>;
}

function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `The request is invalid: body${path} ${message}.`, { errors: [{ location: 'body', path, message }] });
}

class DeadlineError extends Error {}

function beforeDeadline<T>(promise: Promise<T>, deadline: number, now: () => number): Promise<T> {
  const remaining = deadline - now();
  if (remaining <= 0) return Promise.reject(new DeadlineError());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError()), remaining);
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (error: unknown) => { clearTimeout(timer); reject(error); },
    );
  });
}

/** `schema.table` outside PostgreSQL's public, else the bare name (as the semantic index names tables too). */
const targetName = ({ schema, table }: Pick<SearchTarget, 'schema' | 'table'>): string =>
  schema && schema !== 'public' ? `${schema}.${table}` : table;

/**
 * A semantic hit's snippet and matched columns: the row's text, HTML-escaped and cut, with any of the query's words
 * it happens to contain marked; matchedColumns are the text columns the row was embedded from (those with text).
 */
function semanticDetail(fields: Record<string, unknown>, textColumns: string[], query: CompiledQuery): HitDetail {
  const { snippet } = highlightRow(fields, textColumns, query.terms, 'word');
  return { fields, snippet, matchedColumns: textColumns.filter((c) => (textOf(fields[c]) ?? '').trim() !== '') };
}

/**
 * A value signed in the idle time while the databases work (a check-phase callback, which runs once the statements
 * are written): the next page's cursor needs only the search and the offset, and its SHA-256 fingerprint and HMAC
 * cost tens of microseconds after the rows are in, when the CPU's caches are cold (profiled under bench:search),
 * against nothing during the wait. `take` returns it, signing at once if the wait was too short.
 */
function signWhileWaiting(sign: () => string): { take: () => string } {
  let value: string | undefined;
  const early = setImmediate(() => (value ??= sign()));
  return {
    take: () => {
      clearImmediate(early);
      return (value ??= sign());
    },
  };
}

const keyText = (values: unknown[]): string => values.map((v) => String(plainValue(v))).join(',');

/** Table and column selections whose targets are remembered per schema (SearchService.targetsOf). */
const MAX_SELECTIONS = 100;

/** How long a named connection's record is reused without reading the store (a change drops it at once). */
export const RECORD_TTL_MS = 5_000;

export class SearchService {
  private readonly schemas = new TtlCache<SearchSchema>(SCHEMA_TTL_MS);
  private readonly records = new TtlCache<DatabaseConnectionRecord>(RECORD_TTL_MS, 10_000);
  private readonly targets = new WeakMap<SearchSchema, Map<string, SearchTarget[]>>();
  private readonly now: () => number;

  constructor(private readonly deps: SearchDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** searchDatabases */
  async search(caller: KeyCaller, request: SearchRequest): Promise<SearchData> {
    const started = this.now();
    const mode = request.searchMode ?? 'natural';
    // Hybrid's full-text half reads the query as natural mode does; semantic mode only embeds it.
    const { query, excludedOnly } = compileQuery(request.query, mode === 'boolean' ? 'boolean' : 'natural');
    if (query.text === '') throw invalid('/query', 'must contain a word');
    if (excludedOnly && mode !== 'semantic') throw invalid('/query', 'needs at least one word that is not excluded (-word): nothing can match only exclusions');
    const limit = request.limit ?? DEFAULT_LIMIT;
    const records = await this.selectConnections(caller, request.databases ?? []);
    const filters: TargetFilters = { tables: request.tables, columns: request.columns };
    // Worked out when first needed: before the queries only to check a cursor or key the cache, else while they run.
    let print: string | undefined;
    const fingerprint = () => (print ??= searchFingerprint({
      u: caller.user.id, e: caller.key.environment, q: query.text, m: mode,
      d: [...(request.databases ?? [])].sort(), t: [...(request.tables ?? [])].sort(), c: [...(request.columns ?? [])].sort(),
    }));
    const offset = request.cursor !== undefined ? this.cursorOffset(request.cursor, fingerprint()) : (request.offset ?? 0);
    if (offset + limit > MAX_WINDOW) throw invalid('/offset', `plus limit may not exceed ${MAX_WINDOW} (offset ${offset} + limit ${limit})`);
    if (mode === 'semantic' || mode === 'hybrid') {
      return this.searchByMeaning(caller, request, { mode, query, limit, offset, records, filters, fingerprint: fingerprint(), started });
    }

    const cache = this.deps.cache;
    // null when results are not cached (SEARCH_CACHE_TTL_MS=0): no key to hash, no page to serialise.
    const cacheKey = cache.enabled
      ? createHash('sha256').update(JSON.stringify({ fingerprint: fingerprint(), offset, limit, d: records.map((r) => [r.id, r.updatedAt.getTime()]) })).digest('base64url')
      : null;
    const cached = cacheKey ? await cache.get(cacheKey) : null;
    if (cached) {
      const entry = JSON.parse(cached) as { data: SearchData; tables: string[] };
      const data = { ...entry.data, tookMs: Math.max(0, Math.round(this.now() - started)) };
      this.record(caller, data, records, entry.tables, 'ok');
      return data;
    }

    const deadline = started + this.deps.timeoutMs;
    const top = offset + limit;
    const searching = Promise.all(records.map((record) => this.searchDatabase(record, query, filters, { offset, limit, top, databases: records.length }, deadline)));
    // Only a page ending within MAX_OFFSET has a next cursor (pageData), so only then is one signed in advance.
    const signNext = () => encodeCursor(this.deps.cursorSecret, fingerprint(), top);
    const nextCursor = top <= MAX_OFFSET ? signWhileWaiting(signNext).take : signNext;
    const outcomes = await searching;
    const lists = outcomes.flatMap((database) => database.tables.map((table) =>
      table.ranking.rows.map((row, i): Candidate => ({ id: this.resultId(database.record, table, row), rank: i + 1, database, table, row }))));
    const page = fuse(lists).slice(offset, offset + limit);
    await this.fillDetails(page.map((p) => p.item), deadline);

    const total = outcomes.reduce((sum, o) => sum + o.tables.reduce((s, t) => s + t.ranking.total, 0), 0);
    const data = this.pageData({
      request, mode, page, total, offset, limit, nextCursor, started, outcomes,
      totalIsEstimate: outcomes.some((o) => o.tables.some((t) => t.ranking.totalIsEstimate)),
    });
    const tables = [...new Set(outcomes.flatMap((o) => o.tables.map((t) => this.tableName(t))))];
    const failed = outcomes.filter((o) => o.status !== 'ok').length;
    if (failed === 0 && cacheKey) await cache.set(cacheKey, JSON.stringify({ data, tables }), records.map((r) => r.id));
    this.record(caller, data, records, tables, failed === 0 ? 'ok' : failed === outcomes.length ? 'error' : 'partial');
    return data;
  }

  /**
   * searchMode semantic and hybrid. Tables are chosen by the full-text rules (environment, ownership, `tables`,
   * `columns`); the semantic engine ranks the indexed rows of those tables by cosine similarity and the rows' fields
   * are read from the source by primary key. `semantic` pages the engine's ranking (score: the cosine similarity);
   * `hybrid` fuses the engine's top (offset + limit) with every table's full-text ranking by reciprocal rank fusion
   * (score: the fused score), so tables without a semantic index still contribute their full-text ranking.
   *
   * Never cached: every such search counts an AI request, and a finished index job changes the answer at once.
   */
  private async searchByMeaning(
    caller: KeyCaller,
    request: SearchRequest,
    ctx: {
      mode: 'semantic' | 'hybrid';
      query: CompiledQuery;
      limit: number;
      offset: number;
      records: DatabaseConnectionRecord[];
      filters: TargetFilters;
      fingerprint: string;
      started: number;
    },
  ): Promise<SearchData> {
    const { mode, query, limit, offset, records, filters, fingerprint, started } = ctx;
    const deadline = started + this.deps.timeoutMs;
    const top = offset + limit;
    const selections = await Promise.all(records.map((record) => this.semanticTargets(record, filters, deadline)));
    const reachable = selections.filter((s) => s.targets.size > 0);
    const names = [...new Set(reachable.flatMap((s) => [...s.targets.keys()]))];
    const entryOf = (databaseId: string, table: string) => {
      const selection = selections.find((s) => s.outcome.record.id === databaseId);
      const entry = selection?.targets.get(table);
      return selection && entry ? { selection, entry } : null;
    };

    const fullText = mode === 'hybrid'
      ? Promise.all(records.map((record) => this.searchDatabase(record, query, filters, { offset, limit, top, databases: records.length + 1 }, deadline)))
      : Promise.resolve(null);
    const engine: SemanticSearchResult = reachable.length === 0
      ? { hits: [], total: 0, searchedTables: [], notIndexed: [], providerId: '', matchesByDatabase: {} }
      : await this.deps.semantic({
        caller,
        connections: reachable.map((s) => s.outcome.record),
        tables: names,
        query: query.text,
        limit: mode === 'semantic' ? limit : top,
        offset: mode === 'semantic' ? offset : 0,
      }).catch(async (error: unknown) => {
        await fullText.catch(() => undefined);
        throw error;
      });
    const notIndexed: NotIndexedTable[] = engine.notIndexed.filter((n) => entryOf(n.databaseId, n.table) !== null);
    const searched = engine.searchedTables.filter((s) => entryOf(s.databaseId, s.table) !== null);
    if (mode === 'semantic' && searched.length === 0 && notIndexed.length > 0) throw semanticIndexRequired(notIndexed);

    const tablesOf = new Map<string, TableOutcome>();
    const semanticList: Candidate[] = [];
    for (const hit of engine.hits) {
      const found = entryOf(hit.databaseId, hit.table);
      if (!found) continue;
      const { selection, entry } = found;
      const keys = entry.target.keys.map((k) => hit.primaryKey[k.name]);
      if (keys.some((k) => k === undefined)) continue;
      const tableKey = `${hit.databaseId}:${hit.table}`;
      let table = tablesOf.get(tableKey);
      if (!table) {
        table = { queries: this.rowReader(entry.target, query, selection.outcome.executor!), ranking: { rows: [], total: 0, totalIsEstimate: false } };
        tablesOf.set(tableKey, table);
      }
      semanticList.push({
        id: `${hit.databaseId}:${hit.table}:${keyText(keys)}`,
        rank: semanticList.length + 1 + (mode === 'semantic' ? offset : 0),
        database: selection.outcome,
        table,
        row: { keys, score: hit.score, detail: null },
        semantic: { score: hit.score, textColumns: entry.textColumns },
      });
    }

    const outcomes = (await fullText) ?? selections.map((s) => s.outcome);
    let page: Array<{ item: Candidate; score: number }>;
    let total: number;
    let totalIsEstimate = false;
    if (mode === 'semantic') {
      page = semanticList.map((item) => ({ item, score: item.semantic!.score }));
      total = engine.total;
    } else {
      const lists = outcomes.flatMap((database) => database.tables.map((table) =>
        table.ranking.rows.map((row, i): Candidate => ({ id: this.resultId(database.record, table, row), rank: i + 1, database, table, row }))));
      // Full-text lists first: a row found both ways keeps its full-text highlights.
      const fused = fuse([...lists, semanticList]);
      page = fused.slice(offset, offset + limit);
      const fullTextTotal = outcomes.reduce((sum, o) => sum + o.tables.reduce((s, t) => s + t.ranking.total, 0), 0);
      const complete = outcomes.every((o) => o.tables.every((t) => t.ranking.rows.length >= t.ranking.total)) && engine.hits.length >= engine.total;
      // Both rankings complete: the fused list is every match once. Otherwise rows found both ways count twice.
      total = complete ? fused.length : fullTextTotal + engine.total;
      totalIsEstimate = !complete || outcomes.some((o) => o.tables.some((t) => t.ranking.totalIsEstimate));
    }
    await this.fillDetails(page.map((p) => p.item), deadline);
    for (const { item } of page) {
      if (item.semantic && item.row.detail) item.row.detail = semanticDetail(item.row.detail.fields, item.semantic.textColumns, query);
    }

    const semanticMatches = engine.matchesByDatabase;
    const data: SearchData = {
      ...this.pageData({
        request, mode, page, total, totalIsEstimate, offset, limit, started, outcomes,
        nextCursor: () => encodeCursor(this.deps.cursorSecret, fingerprint, top),
        databaseTookMs: (o) => (mode === 'semantic' && o.status === 'ok' ? Math.max(0, Math.round(this.now() - started)) : o.tookMs),
        extraMatches: (o) => semanticMatches[o.record.id] ?? 0,
      }),
      semanticUnindexedTables: notIndexed.map(({ databaseId, table, reason, message }) => ({ databaseId, table, reason, message })),
    };
    const tables = mode === 'semantic'
      ? [...new Set(searched.map((s) => s.table))]
      : [...new Set([...outcomes.flatMap((o) => o.tables.map((t) => this.tableName(t))), ...searched.map((s) => s.table)])];
    const failed = outcomes.filter((o) => o.status !== 'ok').length;
    this.record(caller, data, records, tables, failed === 0 ? 'ok' : failed === outcomes.length ? 'error' : 'partial');
    return data;
  }

  /** The tables of one database the request selects (chooseTargets), each with the text columns indexing embeds. */
  private async semanticTargets(record: DatabaseConnectionRecord, filters: TargetFilters, deadline: number): Promise<SemanticTargets> {
    const started = this.now();
    const outcome: DatabaseOutcome = { record, executor: null, status: 'ok', error: null, tookMs: 0, tables: [] };
    const targets: SemanticTargets['targets'] = new Map();
    try {
      const { executor, schema } = await this.schemaOf(record, deadline);
      outcome.executor = executor;
      for (const target of chooseTargets(schema, filters)) {
        const table = schema.tables.find((t) => t.name === target.table && (t.schema ?? null) === target.schema);
        targets.set(targetName(target), { target, textColumns: table?.textColumns ?? target.searchColumns });
      }
    } catch (error) {
      Object.assign(outcome, this.failure(error));
    }
    outcome.tookMs = Math.max(0, Math.round(this.now() - started));
    return { outcome, targets };
  }

  /** Reads rows by primary key (the page-row fetch of the fallback builder; its ranking statement is never run). */
  private rowReader(target: SearchTarget, query: CompiledQuery, executor: SqlExecutor): TableQueries {
    const anyRoot: CompiledQuery = { ...query, root: query.root ?? { kind: 'term', word: query.text, prefix: false } };
    return createLikeQueries(target, anyRoot, executor)!;
  }

  /**
   * chooseTargets, remembered per cached schema and filters: the same search gets the same target objects, which is
   * what lets a table's rank statement be built once (sql-postgres.ts). A new schema (edit, expiry) starts afresh.
   */
  private targetsOf(schema: SearchSchema, filters: TargetFilters): SearchTarget[] {
    let bySelection = this.targets.get(schema);
    if (!bySelection) this.targets.set(schema, (bySelection = new Map()));
    const selection = JSON.stringify([filters.tables ?? null, filters.columns ?? null]);
    let targets = bySelection.get(selection);
    if (!targets) {
      if (bySelection.size >= MAX_SELECTIONS) bySelection.clear();
      targets = chooseTargets(schema, filters);
      bySelection.set(selection, targets);
    }
    return targets;
  }

  /** A connection changed or went: its schema and every cached page that read it are stale. */
  forget(databaseId: string): void {
    this.records.forget(databaseId);
    this.schemas.forget(databaseId);
    this.deps.cache.forgetDatabase(databaseId).catch((error: unknown) => this.deps.onError(error));
  }

  /** A connection's pooled executor and its search schema (discovered on first use, then cached). */
  async schemaOf(record: DatabaseConnectionRecord, deadline: number): Promise<{ executor: SqlExecutor; schema: SearchSchema }> {
    const executor = await beforeDeadline(this.deps.databases.executorFor(record), deadline, this.now);
    const stamp = `${record.updatedAt.getTime()}`;
    const schema = await beforeDeadline(
      this.schemas.get(record.id, stamp, () => loadSearchSchema(executor, record.tables, Math.max(1, deadline - this.now()))),
      deadline,
      this.now,
    );
    return { executor, schema };
  }

  close(): Promise<void> {
    return this.deps.cache.close();
  }

  /**
   * The named connections (404 unknown or another user's, 401 other environment), or those of the key's environment;
   * at most the plan's databases per search either way (search-fan-out.ts).
   */
  private async selectConnections(caller: KeyCaller, ids: string[]): Promise<DatabaseConnectionRecord[]> {
    const environment = caller.key.environment;
    if (ids.length === 0) return firstDatabases(caller.user, await this.deps.connections.listOwned(caller.user.id, environment));
    assertFanOut(caller.user, ids, this.deps.upgradeUrl);
    const records: DatabaseConnectionRecord[] = [];
    for (const id of ids) {
      const record = await this.ownedRecord(caller.user.id, id);
      if (record.environment !== environment) {
        throw new AppError('KEY_ENVIRONMENT_MISMATCH', `This is a ${environment} key; database ${id} is a ${record.environment} connection.`, {
          databaseId: id, keyEnvironment: environment, databaseEnvironment: record.environment,
        });
      }
      records.push(record);
    }
    return records;
  }

  /** databases.owned (the same 404 for unknown and foreign ids), remembered for RECORD_TTL_MS. */
  private async ownedRecord(userId: string, id: string): Promise<DatabaseConnectionRecord> {
    const record = await this.records.get(id, userId, () => this.deps.databases.owned(userId, id));
    return record.userId === userId ? record : this.deps.databases.owned(userId, id);
  }

  private cursorOffset(cursor: string, fingerprint: string): number {
    const offset = decodeCursor(this.deps.cursorSecret, fingerprint, cursor, MAX_OFFSET);
    if (offset === null) throw invalid('/cursor', 'is not a nextCursor of this search (it was changed, or belongs to another query or caller)');
    return offset;
  }

  private async searchDatabase(
    record: DatabaseConnectionRecord,
    query: CompiledQuery,
    filters: TargetFilters,
    page: { offset: number; limit: number; top: number; databases: number },
    deadline: number,
  ): Promise<DatabaseOutcome> {
    const started = this.now();
    const outcome: DatabaseOutcome = { record, executor: null, status: 'ok', error: null, tookMs: 0, tables: [] };
    try {
      const { executor, schema } = await this.schemaOf(record, deadline);
      outcome.executor = executor;
      const builders = this.targetsOf(schema, filters).flatMap((target) => tableQueries(target, query, executor) ?? []);
      // Which rows may land on the page (rrf.ts); rows outside get their snippet later if they do.
      const lists = builders.length + page.databases - 1;
      const from = firstPossiblePosition(page.offset, lists);
      const window = { from, to: Math.min(page.top, from + 2 * page.limit) };
      const settled = await Promise.allSettled(builders.map(async (queries) => {
        const statement = queries.rank(page.top, queries.inlineDetails ? window : { from: 0, to: 0 });
        const rows = await beforeDeadline(
          executor.query(statement.sql, statement.params, { timeoutMs: Math.max(1, deadline - this.now()) }),
          deadline,
          this.now,
        );
        return { queries, ranking: queries.decodeRanking(rows, window) };
      }));
      for (const result of settled) {
        if (result.status === 'fulfilled') outcome.tables.push(result.value);
        else if (outcome.status === 'ok') Object.assign(outcome, this.failure(result.reason));
      }
    } catch (error) {
      Object.assign(outcome, this.failure(error));
    }
    outcome.tookMs = Math.max(0, Math.round(this.now() - started));
    return outcome;
  }

  /** A database's failure in words safe to show: timeouts apart, connector codes as they are, bugs hidden. */
  private failure(error: unknown): Pick<DatabaseOutcome, 'status' | 'error'> {
    const seconds = `${Math.round(this.deps.timeoutMs / 100) / 10} s`;
    if (error instanceof DeadlineError || (isConnectorError(error) && error.code === 'DATABASE_TIMEOUT')) {
      return { status: 'timeout', error: { code: 'DATABASE_TIMEOUT', message: `The database did not answer within the search time limit (${seconds}).` } };
    }
    if (isConnectorError(error)) return { status: 'error', error: error.toSafeError() };
    if (error instanceof AppError) return { status: 'error', error: { code: error.code, message: error.message } };
    this.deps.onError(error);
    return { status: 'error', error: { code: 'INTERNAL_ERROR', message: 'The search of this database failed.' } };
  }

  /** Snippets and fields of page rows the rank statements left without (deep pages over several tables, FTS5). */
  private async fillDetails(page: Candidate[], deadline: number): Promise<void> {
    const missing = new Map<TableOutcome, Candidate[]>();
    for (const candidate of page.filter((c) => c.row.detail === null)) {
      missing.set(candidate.table, [...(missing.get(candidate.table) ?? []), candidate]);
    }
    await Promise.all([...missing].map(async ([table, candidates]) => {
      const executor = candidates[0]!.database.executor!;
      const statement = table.queries.details(candidates.map((c) => c.row.keys));
      try {
        const budget = Math.max(500, deadline - this.now());
        const rows = await beforeDeadline(executor.query(statement.sql, statement.params, { timeoutMs: budget }), this.now() + budget, this.now);
        const byKey = new Map(table.queries.decodeDetails(rows).map((d) => [keyText(d.keys), d.detail]));
        for (const candidate of candidates) candidate.row.detail = byKey.get(keyText(candidate.row.keys)) ?? null;
      } catch (error) {
        if (!(error instanceof DeadlineError) && !isConnectorError(error)) this.deps.onError(error);
      }
    }));
  }

  private tableName(table: TableOutcome): string {
    return targetName(table.queries.target);
  }

  private resultId(record: DatabaseConnectionRecord, table: TableOutcome, row: RankedRow): string {
    return `${record.id}:${this.tableName(table)}:${keyText(row.keys)}`;
  }

  /** The response page shared by every mode: results, totals, paging and each database's status. */
  private pageData(p: {
    request: { query: string };
    mode: SearchData['searchMode'];
    page: Array<{ item: Candidate; score: number }>;
    total: number;
    totalIsEstimate: boolean;
    offset: number;
    limit: number;
    /** The cursor of the page after this one (asked only when there is one). */
    nextCursor: () => string;
    started: number;
    outcomes: DatabaseOutcome[];
    databaseTookMs?: (outcome: DatabaseOutcome) => number;
    extraMatches?: (outcome: DatabaseOutcome) => number;
  }): SearchData {
    const { page, total, offset, limit } = p;
    const hasMore = offset + page.length < total;
    return {
      query: p.request.query,
      searchMode: p.mode,
      results: page.map(({ item, score }, i) => this.result(item, score, offset + i + 1)),
      total,
      totalIsEstimate: p.totalIsEstimate,
      limit,
      offset,
      hasMore,
      nextCursor: hasMore && offset + limit <= MAX_OFFSET ? p.nextCursor() : null,
      tookMs: Math.max(0, Math.round(this.now() - p.started)),
      databases: p.outcomes.map((o) => ({
        databaseId: o.record.id,
        databaseName: o.record.name,
        engine: o.record.engine,
        status: o.status,
        tookMs: p.databaseTookMs ? p.databaseTookMs(o) : o.tookMs,
        matches: o.tables.reduce((s, t) => s + t.ranking.total, 0) + (p.extraMatches ? p.extraMatches(o) : 0),
        error: o.error,
      })),
      unindexedTables: p.outcomes.flatMap((o) => o.tables.filter((t) => t.queries.target.index === null)
        .map((t) => ({ databaseId: o.record.id, table: this.tableName(t) }))),
    };
  }

  private result(candidate: Candidate, score: number, rank: number): SearchResult {
    const { database, table, row } = candidate;
    const primaryKey = Object.fromEntries(table.queries.target.keys.map((k, i) => [k.name, plainValue(row.keys[i])]));
    const detail: HitDetail = row.detail ?? { fields: { ...primaryKey }, snippet: '', matchedColumns: [] };
    return {
      id: candidate.id,
      databaseId: database.record.id,
      databaseName: database.record.name,
      table: this.tableName(table),
      primaryKey,
      rank,
      score: Math.round(score * 1e8) / 1e8,
      snippet: detail.snippet,
      matchedColumns: detail.matchedColumns,
      fields: detail.fields,
    };
  }

  private record(
    caller: KeyCaller,
    data: SearchData,
    records: DatabaseConnectionRecord[],
    tables: string[],
    status: 'ok' | 'partial' | 'error',
  ): void {
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
