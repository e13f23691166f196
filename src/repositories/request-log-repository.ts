import { fn, col, Op, type InferCreationAttributes } from 'sequelize';
import { RequestLogModel } from '../models/index.js';
import { bucketExpression, type BucketUnit } from './time-buckets.js';
import { storedTimestamp } from './sql-helpers.js';

export type NewRequestLog = Omit<InferCreationAttributes<RequestLogModel>, 'id'>;

export interface UsageTotals {
  total: number;
  failed: number;
  averageMs: number;
}

export interface EndpointRow {
  endpoint: string;
  requests: number;
  averageMs: number;
}

export interface BucketRow {
  bucket: string;
  requests: number;
  averageMs: number;
  rateLimited: number;
  /** Requests admitted against the key's limit (not refused, not exempt). */
  counted: number;
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export const requestLogRepository = {
  /**
   * One multi-row INSERT. Plain rows, not bulkCreate: every API-key request lands here, and building, validating
   * and hooking a model instance per row cost more than the write itself (the rows are ours, already valid).
   */
  async insertMany(rows: NewRequestLog[]): Promise<void> {
    if (rows.length === 0) return;
    await RequestLogModel.sequelize!.getQueryInterface().bulkInsert(
      RequestLogModel.getTableName() as string,
      rows.map((row) => ({
        key_id: row.keyId,
        user_id: row.userId,
        endpoint: row.endpoint,
        status: row.status,
        duration_ms: row.durationMs,
        rate_limited: row.rateLimited,
        counted: row.counted,
        created_at: storedTimestamp(row.createdAt),
      })),
    );
  },

  /** Retention: deletes up to `batchSize` request records older than `cutoff`; returns how many went. */
  async deleteOlderThan(cutoff: Date, batchSize: number): Promise<number> {
    const rows = await RequestLogModel.findAll({ attributes: ['id'], where: { createdAt: { [Op.lt]: cutoff } }, limit: batchSize, raw: true });
    if (rows.length === 0) return 0;
    return RequestLogModel.destroy({ where: { id: rows.map((row) => row.id) } });
  },

  async totals(keyId: string, since: Date): Promise<UsageTotals> {
    const [row] = (await RequestLogModel.findAll({
      where: { keyId, createdAt: { [Op.gte]: since } },
      attributes: [
        [fn('COUNT', col('id')), 'total'],
        [fn('SUM', literalCase('status >= 400')), 'failed'],
        [fn('AVG', col('duration_ms')), 'averageMs'],
      ],
      raw: true,
    })) as unknown as Record<string, unknown>[];
    return { total: num(row?.total), failed: num(row?.failed), averageMs: num(row?.averageMs) };
  },

  async byEndpoint(keyId: string, since: Date, limit: number): Promise<EndpointRow[]> {
    const rows = (await RequestLogModel.findAll({
      where: { keyId, createdAt: { [Op.gte]: since } },
      attributes: ['endpoint', [fn('COUNT', col('id')), 'requests'], [fn('AVG', col('duration_ms')), 'averageMs']],
      group: ['endpoint'],
      order: [[fn('COUNT', col('id')), 'DESC'], ['endpoint', 'ASC']],
      limit,
      raw: true,
    })) as unknown as Record<string, unknown>[];
    return rows.map((row) => ({ endpoint: String(row.endpoint), requests: num(row.requests), averageMs: num(row.averageMs) }));
  },

  async byBucket(keyId: string, since: Date, unit: BucketUnit): Promise<BucketRow[]> {
    const sequelize = RequestLogModel.sequelize!;
    const bucket = bucketExpression(sequelize, 'created_at', unit);
    const rows = (await RequestLogModel.findAll({
      where: { keyId, createdAt: { [Op.gte]: since } },
      attributes: [
        [bucket, 'bucket'],
        [fn('COUNT', col('id')), 'requests'],
        [fn('AVG', col('duration_ms')), 'averageMs'],
        [fn('SUM', literalCase('rate_limited')), 'rateLimited'],
        [fn('SUM', literalCase('counted AND NOT rate_limited')), 'counted'],
      ],
      group: [bucket as never],
      order: [[bucket as never, 'ASC']],
      raw: true,
    })) as unknown as Record<string, unknown>[];
    return rows.map((row) => ({
      bucket: String(row.bucket),
      requests: num(row.requests),
      averageMs: num(row.averageMs),
      rateLimited: num(row.rateLimited),
      counted: num(row.counted),
    }));
  },
};

/** `CASE WHEN <condition> THEN 1 ELSE 0 END`, portable across SQLite and PostgreSQL. */
function literalCase(condition: string) {
  return RequestLogModel.sequelize!.literal(`CASE WHEN ${condition} THEN 1 ELSE 0 END`);
}

export type RequestLogRepository = typeof requestLogRepository;
