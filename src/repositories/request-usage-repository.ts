import { fn, col, literal, Op } from 'sequelize';
import { RequestUsageModel } from '../models/index.js';
import { bucketExpression, type BucketUnit } from './time-buckets.js';
import { num, storedTimestamp } from './sql-helpers.js';

/** What one batch adds to the row of a key, endpoint and minute. */
export interface UsageDelta {
  keyId: string;
  userId: string | null;
  endpoint: string;
  /** Start of the UTC minute, in ms. */
  minuteMs: number;
  requests: number;
  failed: number;
  rateLimited: number;
  counted: number;
  totalMs: number;
}

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

const MINUTE_MS = 60_000;
const sums = ['requests', 'failed', 'rate_limited', 'counted', 'total_ms'] as const;
const upsertColumns = ['key_id', 'user_id', 'endpoint', 'minute_start', ...sums];
/** Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK = 500;

/**
 * Readers ask "since a moment"; the record is the minute. The minute holding `since` is included whole, so no
 * request after `since` is ever missed (at most 59 s before it are counted too).
 */
const sinceMinute = (since: Date) => new Date(since.getTime() - (since.getTime() % MINUTE_MS));
const ofKeySince = (keyId: string, since: Date) => ({ keyId, minuteStart: { [Op.gte]: sinceMinute(since) } });
const averageMs = () => literal('CAST(SUM(total_ms) AS FLOAT) / SUM(requests)');
/** The same order in every process, whatever its locale. */
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const requestUsageRepository = {
  /**
   * Adds a batch of per-minute counts: one multi-row upsert per chunk, each row adding to what other batches (and
   * other server processes) wrote for the same key, endpoint and minute. Rows are sorted by their conflict key so
   * concurrent writers lock rows in the same order.
   */
  async add(deltas: UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    const sorted = [...deltas].sort((a, b) => byCodePoint(a.keyId, b.keyId) || a.minuteMs - b.minuteMs || byCodePoint(a.endpoint, b.endpoint));
    const sequelize = RequestUsageModel.sequelize!;
    const updates = sums.map((c) => `${c} = request_usage_minutely.${c} + excluded.${c}`).join(', ');
    // One transaction: a batch is added whole or not at all, so retrying a failed one never counts twice.
    await sequelize.transaction(async (transaction) => {
      for (let i = 0; i < sorted.length; i += CHUNK) {
        const chunk = sorted.slice(i, i + CHUNK);
        const rows = chunk.map(() => `(${upsertColumns.map(() => '?').join(', ')})`).join(', ');
        await sequelize.query(
          `INSERT INTO request_usage_minutely (${upsertColumns.join(', ')}) VALUES ${rows}
           ON CONFLICT (key_id, minute_start, endpoint) DO UPDATE SET ${updates}`,
          {
            replacements: chunk.flatMap((d) => [
              d.keyId, d.userId, d.endpoint, storedTimestamp(new Date(d.minuteMs)), d.requests, d.failed, d.rateLimited, d.counted, d.totalMs,
            ]),
            transaction,
          },
        );
      }
    });
  },

  /** Retention: deletes up to `batchSize` minute rows before `cutoff`; returns how many went. */
  async deleteOlderThan(cutoff: Date, batchSize: number): Promise<number> {
    const rows = await RequestUsageModel.findAll({ attributes: ['id'], where: { minuteStart: { [Op.lt]: cutoff } }, limit: batchSize, raw: true });
    if (rows.length === 0) return 0;
    return RequestUsageModel.destroy({ where: { id: rows.map((row) => row.id) } });
  },

  async totals(keyId: string, since: Date): Promise<UsageTotals> {
    const [row] = (await RequestUsageModel.findAll({
      where: ofKeySince(keyId, since),
      attributes: [[fn('SUM', col('requests')), 'total'], [fn('SUM', col('failed')), 'failed'], [averageMs(), 'averageMs']],
      raw: true,
    })) as unknown as Record<string, unknown>[];
    return { total: num(row?.total), failed: num(row?.failed), averageMs: num(row?.averageMs) };
  },

  async byEndpoint(keyId: string, since: Date, limit: number): Promise<EndpointRow[]> {
    const rows = (await RequestUsageModel.findAll({
      where: ofKeySince(keyId, since),
      attributes: ['endpoint', [fn('SUM', col('requests')), 'requests'], [averageMs(), 'averageMs']],
      group: ['endpoint'],
      order: [[fn('SUM', col('requests')), 'DESC'], ['endpoint', 'ASC']],
      limit,
      raw: true,
    })) as unknown as Record<string, unknown>[];
    return rows.map((row) => ({ endpoint: String(row.endpoint), requests: num(row.requests), averageMs: num(row.averageMs) }));
  },

  /** Per bucket of `unit` (a minute or coarser: each minute row falls in exactly one bucket). */
  async byBucket(keyId: string, since: Date, unit: BucketUnit): Promise<BucketRow[]> {
    const bucket = bucketExpression(RequestUsageModel.sequelize!, 'minute_start', unit);
    const rows = (await RequestUsageModel.findAll({
      where: ofKeySince(keyId, since),
      attributes: [
        [bucket, 'bucket'],
        [fn('SUM', col('requests')), 'requests'],
        [averageMs(), 'averageMs'],
        [fn('SUM', col('rate_limited')), 'rateLimited'],
        [fn('SUM', col('counted')), 'counted'],
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

export type RequestUsageRepository = typeof requestUsageRepository;
