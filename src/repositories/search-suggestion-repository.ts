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
};

export type SearchSuggestionRepository = typeof searchSuggestionRepository;
