import { SearchRecordModel } from '../models/index.js';
import { num, select, textOrder } from './sql-helpers.js';

export interface QueryCount {
  query: string;
  count: number;
}

const sequelize = () => SearchRecordModel.sequelize!;

/** `text%` for LIKE, case-folded, with LIKE's own characters escaped by '!'. */
function prefixPattern(prefix: string): string {
  return `${prefix.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** getSearchSuggestions' reads of search_records: past queries that start with what the caller typed. */
export const searchSuggestionRepository = {
  /** The user's own queries starting with `prefix` since `since`, most searched first. */
  async ownQueries(userId: string, prefix: string, since: Date, limit: number): Promise<QueryCount[]> {
    const rows = await select(sequelize(), `
      SELECT query, COUNT(*) AS count, MAX(created_at) AS last_at FROM search_records
      WHERE user_id = :userId AND created_at >= :since AND LOWER(query) LIKE :pattern ESCAPE '!'
      GROUP BY query ORDER BY count DESC, last_at DESC, ${textOrder(sequelize(), 'query')} LIMIT :limit`,
    { userId, since, pattern: prefixPattern(prefix), limit });
    return rows.map((row) => ({ query: String(row.query), count: num(row.count) }));
  },

  /**
   * Queries of all users starting with `prefix`, case-folded, that found something and were searched by at least
   * `minUsers` distinct users (what one or two users typed is never shown to others).
   */
  async popularQueries(prefix: string, since: Date, minUsers: number, limit: number): Promise<QueryCount[]> {
    const rows = await select(sequelize(), `
      SELECT LOWER(query) AS query, COUNT(*) AS count FROM search_records
      WHERE created_at >= :since AND result_count > 0 AND LOWER(query) LIKE :pattern ESCAPE '!'
      GROUP BY LOWER(query) HAVING COUNT(DISTINCT user_id) >= :minUsers
      ORDER BY count DESC, ${textOrder(sequelize(), 'LOWER(query)')} LIMIT :limit`,
    { since, pattern: prefixPattern(prefix), minUsers, limit });
    return rows.map((row) => ({ query: String(row.query), count: num(row.count) }));
  },
};

export type SearchSuggestionRepository = typeof searchSuggestionRepository;
