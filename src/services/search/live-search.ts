/**
 * The live engine of searchDatabases (search-core/engine.ts): tables answered by their own database's full-text search
 * (src/sql-search) rather than by Quarry's index — tables not synced yet, connections with indexing off, boolean mode,
 * a `columns` selection, or a caller who asks for live results. Each table's ranking is a list of its own (scores of
 * different tables do not compare). Each database is searched within the search's deadline; a failing or slow one
 * is reported and never fails the search.
 */
import { isConnectorError, type SqlExecutor } from '../../connectors/index.js';
import { AppError } from '../../errors/app-error.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import { keyText, type DatabaseAnswer, type DetailAsk, type Engine, type EngineHit, type EnginePlan, type RankAsk, type Ranking, type ResultRow } from '../../search-core/engine.js';
import type { CompiledQuery } from '../../search-core/query.js';
import { firstPossiblePosition } from '../../search-core/rrf.js';
import { tableQueries } from '../../sql-search/queries.js';
import { chooseTargets, type TargetFilters } from '../../sql-search/targets.js';
import type { RankedRow, SearchTarget, TableQueries, TableRanking } from '../../sql-search/types.js';
import { beforeDeadline, DeadlineError, type SearchCatalog } from './search-catalog.js';

type SafeError = { code: string; message: string };

export interface TableOutcome {
  queries: TableQueries;
  ranking: TableRanking;
}

/** One database's live answer: its ranked tables, or why it has none. */
export interface LiveOutcome {
  record: DatabaseConnectionRecord;
  executor: SqlExecutor | null;
  status: 'ok' | 'timeout' | 'error';
  error: SafeError | null;
  tookMs: number;
  tables: TableOutcome[];
}

export interface LivePage {
  offset: number;
  limit: number;
  top: number;
  /** Ranked lists the page is merged from (for which rows can still land on it). */
  lists: number;
}

/** The live engine's part of one search: the databases it reads, each without the tables the index answers. */
export interface LivePlan extends EnginePlan {
  databases: Array<{ record: DatabaseConnectionRecord; skip: Set<string> }>;
  /** The request's `tables` and `columns`. */
  filters: TargetFilters;
}

/** What the live engine plans its part of a search from: each database the search reads, and what the request asks. */
export interface LiveSearch {
  /** `searchLive`: a table is left to the live engine; `indexedNames`: the tables the index answers instead. */
  plans: Array<{ record: DatabaseConnectionRecord; searchLive: boolean; indexedNames: Set<string> }>;
  /** The request's `tables` and `columns`. */
  request: TargetFilters;
  mode: string;
  /** The request filters, sorts or counts facets: only the index can. */
  byIndexOnly: boolean;
}

/** The live engine's part: the databases with a table left to it, each without the tables the index answers. */
export function planLive(search: LiveSearch): LivePlan {
  // A database's own full-text search ranks words: it cannot rank by meaning, nor filter, sort or count by columns.
  const plans = search.mode === 'semantic' || search.byIndexOnly ? [] : search.plans;
  const databases = plans.filter((p) => p.searchLive).map((p) => ({ record: p.record, skip: p.indexedNames }));
  return { databases, lists: databases.length, filters: search.request };
}

/** A row of one table's live ranking. */
export interface LiveRef {
  database: LiveOutcome;
  table: TableOutcome;
  row: RankedRow;
}

export interface LiveSearchDeps {
  /** Each database's executor and full-text indexes. */
  catalog: Pick<SearchCatalog, 'liveSchema'>;
  /** Unexpected failures (bugs), logged; the caller sees a safe error per database. */
  onError(error: unknown): void;
  now?: () => number;
  /** Per-database budget of one search (SEARCH_TIMEOUT_MS), for messages. */
  timeoutMs: number;
}

/** `schema.table` outside PostgreSQL's public, else the bare name (as the index names tables too). */
export const targetName = ({ schema, table }: Pick<SearchTarget, 'schema' | 'table'>): string =>
  schema && schema !== 'public' ? `${schema}.${table}` : table;

export class LiveEngine implements Engine<LiveSearch, LivePlan, LiveRef> {
  readonly name = 'live';
  private readonly now: () => number;

  constructor(private readonly deps: LiveSearchDeps) {
    this.now = deps.now ?? Date.now;
  }

  plan(search: LiveSearch): LivePlan {
    return planLive(search);
  }

  /** Every database of the plan at once; each table's ranking is a list of its own. */
  async rank(plan: LivePlan, ask: RankAsk): Promise<Ranking<LiveRef>> {
    const { offset, limit, top } = ask.window;
    const page: LivePage = { offset, limit, top, lists: plan.databases.length + ask.mergedWith };
    const outcomes = await Promise.all(plan.databases.map((d) => this.searchDatabase(d.record, ask.words, plan.filters, d.skip, page, ask.deadline)));
    const ranking: Ranking<LiveRef> = {
      lists: [], scored: false, total: 0, totalIsEstimate: false, databases: new Map(), tables: [], corrections: [], facets: {}, facetsAreEstimate: false,
    };
    for (const database of outcomes) {
      const id = database.record.id;
      const answer: DatabaseAnswer = { status: database.status, error: database.error, tookMs: database.tookMs, matches: 0, approximate: false, byRankOnly: true };
      for (const table of database.tables) {
        const name = targetName(table.queries.target);
        ranking.lists.push(table.ranking.rows.map((row, i): EngineHit<LiveRef> => ({
          id: `${id}:${name}:${keyText(row.keys)}`, rank: i + 1, score: row.score, databaseId: id, engine: this.name, ref: { database, table, row },
        })));
        answer.matches += table.ranking.total;
        answer.approximate ||= table.ranking.approximate;
        ranking.total += table.ranking.total;
        ranking.totalIsEstimate ||= table.ranking.totalIsEstimate;
        ranking.tables.push({ databaseId: id, table: name, scanned: table.queries.target.index === null });
      }
      ranking.databases.set(id, answer);
    }
    return ranking;
  }

  /** The page rows' fields and snippets: from the rank statements, or read now for rows they left without. */
  async details(_plan: LivePlan, rows: LiveRef[], ask: DetailAsk): Promise<Array<ResultRow | null>> {
    await this.fillDetails(rows, ask.deadline);
    return rows.map(({ table, row }) => {
      const { target } = table.queries;
      const primaryKey = Object.fromEntries(target.keys.map((k, i) => [k.name, row.keys[i] === undefined ? null : row.keys[i]]));
      const detail = row.detail ?? { fields: { ...primaryKey }, snippet: '', matchedColumns: [] };
      return { table: targetName(target), primaryKey, fields: detail.fields, snippet: detail.snippet, matchedColumns: detail.matchedColumns };
    });
  }

  /**
   * Searches one database's selected tables, leaving out `skip` (tables the index answers). A database with nothing
   * left to search live is not contacted at all.
   */
  private async searchDatabase(
    record: DatabaseConnectionRecord,
    query: CompiledQuery,
    filters: TargetFilters,
    skip: Set<string>,
    page: LivePage,
    deadline: number,
  ): Promise<LiveOutcome> {
    const started = this.now();
    const outcome: LiveOutcome = { record, executor: null, status: 'ok', error: null, tookMs: 0, tables: [] };
    try {
      const { executor, schema } = await this.deps.catalog.liveSchema(record, deadline);
      outcome.executor = executor;
      const targets = chooseTargets(schema, filters).filter((target) => !skip.has(targetName(target)));
      const builders = targets.flatMap((target) => tableQueries(target, query, executor) ?? []);
      // Which rows may land on the page (rrf.ts); rows outside get their snippet later if they do.
      const from = firstPossiblePosition(page.offset, builders.length + page.lists - 1);
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

  /** Snippets and fields of page rows the rank statements left without (deep pages over several tables, FTS5). */
  private async fillDetails(page: LiveRef[], deadline: number): Promise<void> {
    const missing = new Map<TableOutcome, typeof page>();
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

  /** A database's failure in words safe to show: timeouts apart, connector codes as they are, bugs hidden. */
  private failure(error: unknown): Pick<LiveOutcome, 'status' | 'error'> {
    const seconds = `${Math.round(this.deps.timeoutMs / 100) / 10} s`;
    if (error instanceof DeadlineError || (isConnectorError(error) && error.code === 'DATABASE_TIMEOUT')) {
      return { status: 'timeout', error: { code: 'DATABASE_TIMEOUT', message: `The database did not answer within the search time limit (${seconds}).` } };
    }
    if (isConnectorError(error)) return { status: 'error', error: error.toSafeError() };
    if (error instanceof AppError) return { status: 'error', error: { code: error.code, message: error.message } };
    this.deps.onError(error);
    return { status: 'error', error: { code: 'INTERNAL_ERROR', message: 'The search of this database failed.' } };
  }
}
