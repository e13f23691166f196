/** The statement builder of each table by its engine and index (the query itself is compiled in src/search-core). */
import type { CompiledQuery } from '../search-core/query.js';
import { LIVE_RANK_CANDIDATES } from './sql-common.js';
import { createLikeQueries } from './sql-like.js';
import { createMysqlQueries } from './sql-mysql.js';
import { createPostgresQueries } from './sql-postgres.js';
import { createSqliteFtsQueries } from './sql-sqlite.js';
import type { Dialect, SearchTarget, TableQueries } from './types.js';

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
