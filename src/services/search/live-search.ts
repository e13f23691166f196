/**
 * The live path of searchDatabases: tables answered by their own database's full-text search (src/sql-search) rather
 * than by Quarry's index — tables not synced yet, connections with indexing off, boolean mode, a `columns`
 * selection, or a caller who asks for live results. Each database is searched within the search's deadline; a
 * failing or slow one is reported and never fails the search.
 */
import { isConnectorError, type SqlExecutor } from '../../connectors/index.js';
import { AppError } from '../../errors/app-error.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import { tableQueries } from '../../sql-search/queries.js';
import { firstPossiblePosition } from '../../search-core/rrf.js';
import { loadSearchSchema, SCHEMA_TTL_MS, type SearchSchema } from '../../sql-search/schema-catalog.js';
import { plainValue } from '../../sql-search/sql-common.js';
import { chooseTargets, type TargetFilters } from '../../sql-search/targets.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import { withTimeout } from '../../lib/timeout.js';
import type { CompiledQuery } from '../../search-core/query.js';
import type { RankedRow, SearchTarget, TableQueries, TableRanking } from '../../sql-search/types.js';
import type { DatabaseService } from '../databases/database-service.js';

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

export interface LiveSearchDeps {
  databases: Pick<DatabaseService, 'executorFor'>;
  /** Unexpected failures (bugs), logged; the caller sees a safe error per database. */
  onError(error: unknown): void;
  now: () => number;
  /** Per-database budget of one search (SEARCH_TIMEOUT_MS), for messages. */
  timeoutMs: number;
}

export class DeadlineError extends Error {}

/** Settles like `promise` unless the search's deadline passes first (then a DeadlineError), through the one timeout helper. */
export function beforeDeadline<T>(promise: Promise<T>, deadline: number, now: () => number): Promise<T> {
  return withTimeout(promise, deadline - now(), { error: () => new DeadlineError() });
}

/** `schema.table` outside PostgreSQL's public, else the bare name (as the index names tables too). */
export const targetName = ({ schema, table }: Pick<SearchTarget, 'schema' | 'table'>): string =>
  schema && schema !== 'public' ? `${schema}.${table}` : table;

export const keyText = (values: unknown[]): string => values.map((v) => String(plainValue(v))).join(',');

export class LiveSearch {
  private readonly schemas = new TtlCache<SearchSchema>(SCHEMA_TTL_MS);

  constructor(private readonly deps: LiveSearchDeps) {}

  /**
   * Searches one database's selected tables, leaving out `skip` (tables the index answers). A database with nothing
   * left to search live is not contacted at all.
   */
  async search(
    record: DatabaseConnectionRecord,
    query: CompiledQuery,
    filters: TargetFilters,
    skip: Set<string>,
    page: LivePage,
    deadline: number,
  ): Promise<LiveOutcome> {
    const started = this.deps.now();
    const outcome: LiveOutcome = { record, executor: null, status: 'ok', error: null, tookMs: 0, tables: [] };
    try {
      const { executor, schema } = await this.schemaOf(record, deadline);
      outcome.executor = executor;
      const targets = chooseTargets(schema, filters).filter((target) => !skip.has(targetName(target)));
      const builders = targets.flatMap((target) => tableQueries(target, query, executor) ?? []);
      // Which rows may land on the page (rrf.ts); rows outside get their snippet later if they do.
      const from = firstPossiblePosition(page.offset, builders.length + page.lists - 1);
      const window = { from, to: Math.min(page.top, from + 2 * page.limit) };
      const settled = await Promise.allSettled(builders.map(async (queries) => {
        const statement = queries.rank(page.top, queries.inlineDetails ? window : { from: 0, to: 0 });
        const rows = await beforeDeadline(
          executor.query(statement.sql, statement.params, { timeoutMs: Math.max(1, deadline - this.deps.now()) }),
          deadline,
          this.deps.now,
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
    outcome.tookMs = Math.max(0, Math.round(this.deps.now() - started));
    return outcome;
  }

  /** Names of the tables a live search of this database would read (the same selection rules), or null if unreachable. */
  async selectedTables(record: DatabaseConnectionRecord, filters: TargetFilters, deadline: number): Promise<string[]> {
    const { schema } = await this.schemaOf(record, deadline);
    return chooseTargets(schema, filters).map(targetName);
  }

  /** Snippets and fields of page rows the rank statements left without (deep pages over several tables, FTS5). */
  async fillDetails(page: Array<{ database: LiveOutcome; table: TableOutcome; row: RankedRow }>, deadline: number): Promise<void> {
    const missing = new Map<TableOutcome, typeof page>();
    for (const candidate of page.filter((c) => c.row.detail === null)) {
      missing.set(candidate.table, [...(missing.get(candidate.table) ?? []), candidate]);
    }
    await Promise.all([...missing].map(async ([table, candidates]) => {
      const executor = candidates[0]!.database.executor!;
      const statement = table.queries.details(candidates.map((c) => c.row.keys));
      try {
        const budget = Math.max(500, deadline - this.deps.now());
        const rows = await beforeDeadline(executor.query(statement.sql, statement.params, { timeoutMs: budget }), this.deps.now() + budget, this.deps.now);
        const byKey = new Map(table.queries.decodeDetails(rows).map((d) => [keyText(d.keys), d.detail]));
        for (const candidate of candidates) candidate.row.detail = byKey.get(keyText(candidate.row.keys)) ?? null;
      } catch (error) {
        if (!(error instanceof DeadlineError) && !isConnectorError(error)) this.deps.onError(error);
      }
    }));
  }

  /** A connection changed or went: its schema is stale. */
  forget(databaseId: string): void {
    this.schemas.forget(databaseId);
  }

  /** A connection's pooled executor and its search schema (discovered on first use, then cached). */
  async schemaOf(record: DatabaseConnectionRecord, deadline: number): Promise<{ executor: SqlExecutor; schema: SearchSchema }> {
    const executor = await beforeDeadline(this.deps.databases.executorFor(record), deadline, this.deps.now);
    const stamp = `${record.updatedAt.getTime()}`;
    const schema = await beforeDeadline(
      this.schemas.get(record.id, stamp, () => loadSearchSchema(executor, record.tables, Math.max(1, deadline - this.deps.now()))),
      deadline,
      this.deps.now,
    );
    return { executor, schema };
  }

  /** A database's failure in words safe to show: timeouts apart, connector codes as they are, bugs hidden. */
  failure(error: unknown): Pick<LiveOutcome, 'status' | 'error'> {
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
