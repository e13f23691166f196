import { literal, Op, where, type InferAttributes, type WhereOptions } from 'sequelize';
import { SearchRecordModel } from '../models/index.js';
import { applyRollups, deleteRollupsBefore } from './search-rollups.js';
import { num, select, textOrder, toDate } from './sql-helpers.js';

export type SearchRecordRow = InferAttributes<SearchRecordModel>;
export type { UnindexedTable } from '../models/search-record.js';

/** Which searches a read covers: one user's (or everyone's, for admin views) in [from, to). */
export interface SearchFilter {
  userId: string | null;
  from: Date;
  to: Date;
}

export function filterWhere(filter: SearchFilter): WhereOptions<SearchRecordRow> {
  return {
    createdAt: { [Op.gte]: filter.from, [Op.lt]: filter.to },
    ...(filter.userId ? { userId: filter.userId } : {}),
  };
}

/** The columns an export reads. */
export type ExportedSearch = Pick<SearchRecordRow, 'id' | 'query' | 'searchMode' | 'resultCount' | 'responseTimeMs' | 'status' | 'createdAt'>;

const plain = (model: SearchRecordModel): SearchRecordRow => model.get({ plain: true });

/** Writes and row-level reads of search_records; the aggregates are in search-stats-repository.ts. */
export const searchRecordRepository = {
  /** The raw rows and their roll-ups, in one transaction: analytics never see one without the other. */
  async insertMany(rows: SearchRecordRow[]): Promise<void> {
    if (rows.length === 0) return;
    const sequelize = SearchRecordModel.sequelize!;
    await sequelize.transaction(async (transaction) => {
      await SearchRecordModel.bulkCreate(rows, { transaction });
      await applyRollups(sequelize, rows, transaction);
    });
  },

  /** getSearchHistory: one page of a user's searches, newest first, and how many there are (from the roll-up). */
  async page(userId: string, limit: number, offset: number): Promise<{ rows: SearchRecordRow[]; total: number }> {
    const sequelize = SearchRecordModel.sequelize!;
    const [rows, [total]] = await Promise.all([
      SearchRecordModel.findAll({ where: { userId }, order: [['createdAt', 'DESC'], [literal(textOrder(sequelize, 'id')), 'DESC']], limit, offset }),
      select(sequelize, 'SELECT SUM(searches) AS total FROM search_stats_hourly WHERE user_id = :userId', { userId }),
    ]);
    return { rows: rows.map(plain), total: num(total?.total) };
  },

  /**
   * Every search of the filter, oldest first, `batchSize` rows per query (keyset on created_at, id), so an export
   * of any size holds one batch in memory. Plain rows of the exported columns: no model instances.
   */
  async *iterate(filter: SearchFilter, batchSize = 5000): AsyncGenerator<ExportedSearch[]> {
    const sequelize = SearchRecordModel.sequelize!;
    const id = literal(textOrder(sequelize, 'id'));
    let last: { createdAt: Date; id: string } | null = null;
    for (;;) {
      const after: WhereOptions = last
        ? { [Op.or]: [{ createdAt: { [Op.gt]: last.createdAt } }, { [Op.and]: [{ createdAt: last.createdAt }, where(id, Op.gt, last.id)] }] }
        : {};
      const rows = (await SearchRecordModel.findAll({
        attributes: ['id', 'query', 'searchMode', 'resultCount', 'responseTimeMs', 'status', 'createdAt'],
        where: { [Op.and]: [filterWhere(filter), after] },
        order: [['createdAt', 'ASC'], [id, 'ASC']],
        limit: batchSize,
        raw: true,
      })) as unknown as Array<Omit<ExportedSearch, 'createdAt'> & { createdAt: unknown }>;
      if (rows.length === 0) return;
      const batch = rows.map((row) => ({ ...row, createdAt: toDate(row.createdAt)! }));
      yield batch;
      if (rows.length < batchSize) return;
      const tail = batch[batch.length - 1]!;
      last = { createdAt: tail.createdAt, id: tail.id };
    }
  },

  /** Retention of the roll-ups: hours and days that start before `cutoff` (a UTC midnight). */
  deleteRollupsBefore(cutoff: Date): Promise<number> {
    return deleteRollupsBefore(SearchRecordModel.sequelize!, cutoff);
  },

  /** Retention: deletes up to `batchSize` searches older than `cutoff`; returns how many went. */
  async deleteOlderThan(cutoff: Date, batchSize: number): Promise<number> {
    const rows = await SearchRecordModel.findAll({ attributes: ['id'], where: { createdAt: { [Op.lt]: cutoff } }, limit: batchSize, raw: true });
    if (rows.length === 0) return 0;
    return SearchRecordModel.destroy({ where: { id: rows.map((row) => row.id) } });
  },
};

export type SearchRecordRepository = typeof searchRecordRepository;
