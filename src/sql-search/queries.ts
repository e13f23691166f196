/** The query compiled once per search, and the statement builder of each table by its engine and index. */
import { anyWordQuery, parseQuery, positiveTerms, type QueryNode } from './boolean-query.js';
import { relaxedReadings, type Relaxation } from './relaxation.js';
import { LIVE_RANK_CANDIDATES } from './sql-common.js';
import { createLikeQueries } from './sql-like.js';
import { createMysqlQueries } from './sql-mysql.js';
import { createPostgresQueries } from './sql-postgres.js';
import { createSqliteFtsQueries } from './sql-sqlite.js';
import type { CompiledQuery, Dialect, SearchTarget, TableQueries } from './types.js';

export interface CompileResult {
  query: CompiledQuery;
  /** Boolean mode, every word excluded: no engine can answer it. */
  excludedOnly: boolean;
}

/** Natural mode: any word may match, no grouping (anyWordQuery); boolean mode: words required, parentheses group. */
export function compileQuery(text: string, mode: 'natural' | 'boolean'): CompileResult {
  // PostgreSQL refuses NUL in text; it separates words like any other non-word character.
  const trimmed = text.replace(/\u0000/g, ' ').trim();
  const parsed = parseQuery(trimmed, { grouping: mode === 'boolean' });
  if (mode === 'natural' && parsed.root) return { query: naturalQuery(trimmed, parsed.root), excludedOnly: parsed.excludedOnly };
  return {
    query: { text: trimmed, mode, root: parsed.root, anyWord: null, terms: positiveTerms(parsed.root) },
    excludedOnly: parsed.excludedOnly,
  };
}

function naturalQuery(text: string, root: QueryNode): CompiledQuery {
  const anyWord = anyWordQuery(root);
  return { text, mode: 'natural', root: anyWord.match, anyWord, terms: positiveTerms(anyWord.rank) };
}

/**
 * The looser readings of a natural-mode query (relaxation.ts), loosest last, each with what it gave up; none in
 * boolean mode, where every word is required because the caller chose so.
 */
export function relaxedQueries(query: CompiledQuery): Array<{ query: CompiledQuery; relaxed: Relaxation[] }> {
  if (query.mode !== 'natural') return [];
  const { root } = parseQuery(query.text, { grouping: false });
  if (!root) return [];
  return relaxedReadings(root).map((reading) => ({ query: naturalQuery(query.text, reading.root), relaxed: reading.relaxed }));
}

/**
 * The statements of one table, or null when the query leaves nothing to search there. `bound` is the most rows a
 * natural-mode ranking considers (LIVE_RANK_CANDIDATES unless a test or benchmark asks for another).
 */
export function tableQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect, bound = LIVE_RANK_CANDIDATES): TableQueries | null {
  if (query.root === null) return null;
  switch (target.engine) {
    case 'postgres':
      return target.index ? createPostgresQueries(target, query, dialect, bound) : createLikeQueries(target, query, dialect);
    case 'mysql':
      return target.index ? createMysqlQueries(target, query, dialect, bound) : createLikeQueries(target, query, dialect);
    case 'sqlite':
      return target.index ? createSqliteFtsQueries(target, query, dialect, bound) : createLikeQueries(target, query, dialect);
  }
}
