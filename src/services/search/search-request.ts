/**
 * What a searchDatabases request asks, read before any database is touched: its words compiled and checked, the page
 * it wants kept inside the contract's bounds, and its fingerprint (everything that decides the ranking), which binds a
 * cursor to its own search and keys the pages the result cache keeps.
 */
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/openapi.js';
import { validationError, type AppError } from '../../errors/app-error.js';
import { decodeCursor, searchFingerprint } from '../../search-core/cursor.js';
import { compileQuery } from '../../search-core/query.js';
import type { CompiledQuery } from '../../search-core/query.js';
import type { KeyCaller } from '../callers.js';

export type SearchRequest = components['schemas']['SearchRequest'];
export type SearchData = components['schemas']['SearchResponse']['data'];
export type SearchMode = SearchData['searchMode'];

/** The contract's bounds (SearchRequest): offset at most 1000, offset + limit at most 1100. */
export const MAX_OFFSET = 1000;
export const MAX_WINDOW = 1100;
export const DEFAULT_LIMIT = 20;
/** Weight of the vector ranking in hybrid search when the request does not set `semanticRatio`. */
export const DEFAULT_SEMANTIC_RATIO = 0.25;

export function invalid(path: string, message: string): AppError {
  return validationError([{ location: 'body', path, message }]);
}

/** The request's words as every path reads them; a query that no engine could answer is refused here. */
export function readQuery(request: SearchRequest): { mode: SearchMode; query: CompiledQuery; limit: number; semanticRatio: number } {
  const mode = request.searchMode ?? 'natural';
  // Hybrid's text half reads the query as natural mode does; semantic mode only embeds it.
  const { query, excludedOnly } = compileQuery(request.query, mode === 'boolean' ? 'boolean' : 'natural');
  if (query.text === '') throw invalid('/query', 'must contain a word');
  if (excludedOnly && mode !== 'semantic') throw invalid('/query', 'needs at least one word that is not excluded (-word): nothing can match only exclusions');
  return { mode, query, limit: request.limit ?? DEFAULT_LIMIT, semanticRatio: request.semanticRatio ?? DEFAULT_SEMANTIC_RATIO };
}

export interface PageRequest {
  /** Everything that decides the ranking: the cursor is bound to it and cached pages are keyed by it. */
  fingerprint: string;
  offset: number;
  /** Rows every source ranks: offset + limit, so the merged order never depends on the page size asked before. */
  top: number;
  typoTolerance: boolean;
  /** Count the index's matches up to its cap rather than among the rows ranked for the page. */
  exactTotal: boolean;
  /** Pseudo-relevance feedback searched over the whole index (a second index query). */
  queryExpansion: boolean;
  /** Pseudo-relevance feedback on the rows the index's text ranking read (no second query). */
  relevanceFeedback: boolean;
}

/**
 * The page a (scoped) request asks for: from its cursor, which must be a nextCursor of this very search, or from its
 * offset; offset + limit stays within MAX_WINDOW.
 */
export function readPage(
  caller: KeyCaller, request: SearchRequest, asked: { mode: SearchMode; query: CompiledQuery; limit: number; semanticRatio: number }, cursorSecret: Buffer,
): PageRequest {
  const { mode, query, limit, semanticRatio } = asked;
  const typoTolerance = request.typoTolerance ?? true;
  // Counting reads deeper, which the heading's weight may reorder: it is part of what decides the ranking.
  const exactTotal = request.exactTotal === true;
  const queryExpansion = request.queryExpansion === true && mode !== 'semantic' && mode !== 'boolean';
  const relevanceFeedback = request.relevanceFeedback !== false && !queryExpansion && (mode === 'natural' || mode === 'hybrid');
  const fingerprint = searchFingerprint({
    u: caller.user.id, e: caller.key.environment, q: query.text, m: mode, l: request.live === true, r: mode === 'hybrid' ? semanticRatio : null,
    d: [...(request.databases ?? [])].sort(), t: [...(request.tables ?? [])].sort(), c: [...(request.columns ?? [])].sort(),
    f: request.filter ?? null, s: request.sort ?? null, a: request.facets ?? null, w: request.databaseWeights ?? null, y: typoTolerance,
    // Only when asked: the default keeps the fingerprints (and cursors) it had before the setting existed.
    ...(exactTotal ? { x: true } : {}),
    ...(queryExpansion ? { qe: true } : {}),
    // On by default, it is in the fingerprint all the same: pages ranked before it existed are not mixed with its own.
    ...(relevanceFeedback ? { rf: true } : {}),
  });
  const offset = request.cursor !== undefined ? cursorOffset(cursorSecret, request.cursor, fingerprint) : (request.offset ?? 0);
  if (offset + limit > MAX_WINDOW) throw invalid('/offset', `plus limit may not exceed ${MAX_WINDOW} (offset ${offset} + limit ${limit})`);
  return { fingerprint, offset, top: offset + limit, typoTolerance, exactTotal, queryExpansion, relevanceFeedback };
}

function cursorOffset(secret: Buffer, cursor: string, fingerprint: string): number {
  const offset = decodeCursor(secret, fingerprint, cursor, MAX_OFFSET);
  if (offset === null) throw invalid('/cursor', 'is not a nextCursor of this search (it was changed, or belongs to another query or caller)');
  return offset;
}

/**
 * The result cache's key of one page. Semantic and hybrid answers are never cached: each counts an AI request. A page
 * is keyed by every connection's version and the last sync of each of its indexed tables, so a sync finished by any
 * process is seen at once.
 */
export function pageCacheKey(
  page: PageRequest, limit: number, mode: SearchMode, databases: Array<{ record: { id: string; updatedAt: Date }; syncedAt: number[] }>,
): string | null {
  if (mode !== 'natural' && mode !== 'boolean') return null;
  return createHash('sha256').update(JSON.stringify({
    fingerprint: page.fingerprint, offset: page.offset, limit, d: databases.map((p) => [p.record.id, p.record.updatedAt.getTime(), p.syncedAt]),
  })).digest('base64url');
}
