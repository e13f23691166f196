/**
 * The semantic engine behind searchMode `semantic` and `hybrid` (POST /search, issue 7). It embeds the query, ranks
 * every indexed row of the selected tables by cosine similarity (a dot product: all vectors are unit length) and
 * returns row references; the search service fetches the rows' fields and, for hybrid, fuses this ranking with the
 * full-text one by reciprocal rank fusion.
 *
 * It counts the AI request itself, once per call and only when it embeds a query: a call over tables none of which
 * is indexed costs the caller nothing.
 */
import type { TableSchema } from '../connectors/index.js';
import { AppError } from '../errors/app-error.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import type { SemanticIndexJobRecord, SemanticIndexJobRepository } from '../repositories/semantic-index-job-repository.js';
import type { KeyCaller } from '../services/callers.js';
import { EmbeddingError, type EmbeddingProvider } from './provider.js';
import { indexableProblem, tableId } from './row-text.js';
import { TopK } from './top-k.js';
import type { VectorCache } from './vector-cache.js';
import { dotRow } from './vectors.js';

export interface SemanticSearchDeps {
  jobs: Pick<SemanticIndexJobRepository, 'latestDone' | 'live'>;
  cache: Pick<VectorCache, 'get'>;
  provider: EmbeddingProvider;
  limits: { admitAiRequest(caller: KeyCaller): Promise<void> };
  /** The connection's table schemas (the cached discovery), to name tables that could be indexed but are not. */
  tablesOf(record: DatabaseConnectionRecord): Promise<TableSchema[]>;
}

export interface SemanticSearchInput {
  /** The API-key caller: one AI request is counted against its tier's hourly AI limit. */
  caller: KeyCaller;
  /** The connections to search (already selected and owner-checked by the search service). */
  connections: DatabaseConnectionRecord[];
  /** Only these tables (`table` or `schema.table`, case-insensitive); empty or absent means all. */
  tables?: string[] | null;
  query: string;
  limit: number;
  offset?: number;
  /** Rows scoring below this cosine similarity are not matches (default 0.2). */
  minScore?: number;
}

/** A ranked row reference; the search service reads the row by its primary key. */
export interface SemanticHit {
  databaseId: string;
  table: string;
  primaryKey: Record<string, unknown>;
  /** Cosine similarity, -1 to 1. */
  score: number;
  /** 1-based position in the whole ranking (offset + index + 1). */
  rank: number;
}

export type NotIndexedReason = 'never_indexed' | 'indexing' | 'model_changed';

export interface NotIndexedTable {
  databaseId: string;
  table: string;
  reason: NotIndexedReason;
  /** What to do, in words for a person. */
  message: string;
}

export interface SemanticSearchResult {
  /** The window [offset, offset + limit) of the ranking. */
  hits: SemanticHit[];
  /** Rows at or above `minScore` over all searched tables. */
  total: number;
  /** `total` per connection id (connections without a match are absent). */
  matchesByDatabase: Record<string, number>;
  /** Tables searched (each with a finished index of the current model). */
  searchedTables: Array<{ databaseId: string; table: string; rows: number }>;
  /** Selected tables without a finished index of the current model: their rows are not in `hits`. */
  notIndexed: NotIndexedTable[];
  providerId: string;
}

export type SemanticSearchFn = (input: SemanticSearchInput) => Promise<SemanticSearchResult>;

const messages: Record<NotIndexedReason, string> = {
  never_indexed: 'This table has no semantic index yet. Start one with POST /api/v1/databases/{databaseId}/semantic-index.',
  indexing: 'This table is being indexed for semantic search; it is searchable once the job is done.',
  model_changed: 'This table was indexed with another embedding model. Index it again to search it semantically.',
};

/** The error for a semantic search none of whose tables is indexed: 409 SEMANTIC_INDEX_REQUIRED naming them. */
export function semanticIndexRequired(notIndexed: NotIndexedTable[]): AppError {
  const names = notIndexed.slice(0, 5).map((t) => t.table).join(', ');
  return new AppError(
    'SEMANTIC_INDEX_REQUIRED',
    notIndexed.length === 0
      ? 'No table of the selected databases has a semantic index. Index a table with POST /api/v1/databases/{databaseId}/semantic-index first.'
      : `No selected table has a finished semantic index (${names}${notIndexed.length > 5 ? ', ...' : ''}). Index them with POST /api/v1/databases/{databaseId}/semantic-index, or search in natural mode.`,
    { notIndexed },
  );
}

const wanted = (filter: string[] | null | undefined) => {
  const names = new Set((filter ?? []).map((name) => name.toLowerCase()));
  return (table: string) => names.size === 0 || names.has(table.toLowerCase()) || names.has(table.slice(table.indexOf('.') + 1).toLowerCase());
};

/** Ranks the indexed rows of the selected tables by meaning. See the file comment for who counts the AI request. */
export async function semanticSearch(deps: SemanticSearchDeps, input: SemanticSearchInput): Promise<SemanticSearchResult> {
  const offset = input.offset ?? 0;
  const minScore = input.minScore ?? 0.2;
  const ids = input.connections.map((c) => c.id);
  const [done, live] = await Promise.all([deps.jobs.latestDone(ids), deps.jobs.live(ids)]);
  const { searchable, notIndexed } = await classify(deps, input, done, live);
  const result: SemanticSearchResult = { hits: [], total: 0, matchesByDatabase: {}, searchedTables: [], notIndexed, providerId: deps.provider.id };
  if (searchable.length === 0) return result;

  await deps.limits.admitAiRequest(input.caller);
  let query: Float32Array;
  try {
    [query] = await deps.provider.embed([input.query], 'query');
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    throw new AppError('SERVICE_UNAVAILABLE', `Semantic search is unavailable: ${error.message}`, { providerId: deps.provider.id }, 503);
  }

  const top = new TopK<{ databaseId: string; table: string; key: string }>(offset + input.limit);
  for (const job of searchable) {
    const vectors = await deps.cache.get(job.connectionId, job.tableName, job.providerId, `${job.id}@${job.finishedAt?.getTime() ?? 0}`);
    result.searchedTables.push({ databaseId: job.connectionId, table: job.tableName, rows: vectors.count });
    if (vectors.dims !== query.length) continue;
    for (let row = 0; row < vectors.count; row += 1) {
      const score = dotRow(query, vectors.matrix, row);
      if (score < minScore) continue;
      result.total += 1;
      result.matchesByDatabase[job.connectionId] = (result.matchesByDatabase[job.connectionId] ?? 0) + 1;
      if (score > top.threshold) top.offer(score, { databaseId: job.connectionId, table: job.tableName, key: vectors.keys[row] });
    }
  }
  result.hits = top.sorted().slice(offset).map(({ score, item }, i) => ({
    databaseId: item.databaseId,
    table: item.table,
    primaryKey: JSON.parse(item.key) as Record<string, unknown>,
    score,
    rank: offset + i + 1,
  }));
  return result;
}

/** Splits the selected tables into those searchable now and those that are not (with the reason). */
async function classify(deps: SemanticSearchDeps, input: SemanticSearchInput, done: SemanticIndexJobRecord[], live: SemanticIndexJobRecord[]) {
  const selected = wanted(input.tables);
  const searchable: SemanticIndexJobRecord[] = [];
  const notIndexed: NotIndexedTable[] = [];
  for (const connection of input.connections) {
    const finished = new Map(done.filter((j) => j.connectionId === connection.id).map((j) => [j.tableName, j]));
    const indexing = new Set(live.filter((j) => j.connectionId === connection.id).map((j) => j.tableName));
    let schema: TableSchema[] = [];
    try {
      schema = await deps.tablesOf(connection);
    } catch {
      // An unreachable database: the tables with a finished index are still searchable from the store.
    }
    const names = new Set([...schema.filter((t) => indexableProblem(t) === null).map(tableId), ...finished.keys()]);
    for (const table of [...names].filter(selected)) {
      const job = finished.get(table);
      if (job?.providerId === deps.provider.id) {
        searchable.push(job);
        continue;
      }
      const reason: NotIndexedReason = indexing.has(table) ? 'indexing' : job ? 'model_changed' : 'never_indexed';
      notIndexed.push({ databaseId: connection.id, table, reason, message: messages[reason] });
    }
  }
  return { searchable, notIndexed };
}
