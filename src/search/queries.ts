/** The query compiled once per search, and the statement builder of each table by its engine and index. */
import { parseQuery, positiveTerms } from './boolean-query.js';
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

/** Natural mode follows websearch rules (no grouping); boolean mode adds parentheses. */
export function compileQuery(text: string, mode: 'natural' | 'boolean'): CompileResult {
  // PostgreSQL refuses NUL in text; it separates words like any other non-word character.
  const trimmed = text.replace(/\u0000/g, ' ').trim();
  const parsed = parseQuery(trimmed, { grouping: mode === 'boolean' });
  return {
    query: { text: trimmed, mode, root: parsed.root, terms: positiveTerms(parsed.root) },
    excludedOnly: parsed.excludedOnly,
  };
}

/** The statements of one table, or null when the query leaves nothing to search there. */
export function tableQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect): TableQueries | null {
  if (query.root === null) return null;
  switch (target.engine) {
    case 'postgres':
      return target.index ? createPostgresQueries(target, query, dialect) : createLikeQueries(target, query, dialect);
    case 'mysql':
      return target.index ? createMysqlQueries(target, query, dialect) : createLikeQueries(target, query, dialect);
    case 'sqlite':
      return target.index ? createSqliteFtsQueries(target, query, dialect) : createLikeQueries(target, query, dialect);
  }
}
