import { PassThrough, Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { operations } from '../../../generated/openapi.js';
import { AppError, validationError } from '../../errors/app-error.js';
import type { ExportedSearch, SearchFilter, SearchRecordRepository } from '../../repositories/search-record-repository.js';
import type { SearchStatsRepository } from '../../repositories/search-stats-repository.js';
import { resolveRange, round1 } from '../../rules/analytics-range.js';
import { fillBuckets } from './analytics-service.js';
import type { UserCaller } from '../callers.js';
import type { PlanService } from '../accounts/plan-service.js';

type ExportQuery = NonNullable<operations['exportAnalytics']['parameters']['query']>;
type Cell = string | number | Date;
type Row = Record<string, Cell>;

/** Columns of a raw export (one row per search), in this order. */
export const RAW_METRICS = ['query', 'searchMode', 'resultCount', 'responseTimeMs', 'status', 'createdAt'] as const;
/** Columns of an aggregated export (one row per bucket, after its `bucket` column), in this order. */
export const BUCKET_METRICS = ['searches', 'averageResponseTimeMs', 'maxResponseTimeMs', 'averageResults', 'zeroResultSearches', 'failedSearches'] as const;

const contentTypes = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;

export interface ExportFile {
  contentType: string;
  filename: string;
  body: Readable;
}

export interface AnalyticsExportDeps {
  records: Pick<SearchRecordRepository, 'iterate'>;
  stats: Pick<SearchStatsRepository, 'byBucket'>;
  plans: Pick<PlanService, 'planOf'>;
  upgradeUrl: string;
  flushPending(): Promise<void>;
  now(): number;
}

/**
 * exportAnalytics: the caller's searches as CSV, JSON or XLSX, streamed. Raw rows are read in keyset batches and
 * written as they come, so no export is ever held whole in memory. Only the enterprise plan (the caller's
 * account plan) has exports (spec: Limits, Tiers).
 */
export class AnalyticsExporter {
  constructor(private readonly deps: AnalyticsExportDeps) {}

  async export(caller: UserCaller, query: ExportQuery): Promise<ExportFile> {
    const tier = await this.deps.plans.planOf(caller.user.id);
    if (tier !== 'enterprise') {
      throw new AppError('FEATURE_NOT_IN_TIER', `Analytics exports are part of the enterprise tier; your tier is ${tier}.`, {
        tier,
        requiredTier: 'enterprise',
        upgradeUrl: this.deps.upgradeUrl,
      });
    }
    const granularity = query.granularity ?? 'raw';
    const columns = parseMetrics(query.metrics, granularity === 'raw' ? RAW_METRICS : BUCKET_METRICS);
    const now = new Date(this.deps.now());
    const range = resolveRange(query, now);
    await this.deps.flushPending();
    const filter: SearchFilter = { userId: caller.user.id, from: range.from, to: range.to };
    const header = granularity === 'raw' ? columns : ['bucket', ...columns];
    const batches = granularity === 'raw' ? this.rawBatches(filter, columns) : this.bucketBatches(filter, granularity, header);
    const format = query.format ?? 'csv';
    const body = format === 'csv' ? Readable.from(csv(header, batches)) : format === 'json' ? Readable.from(json(batches)) : xlsx(header, batches);
    return { contentType: contentTypes[format], filename: `quarry-analytics-${now.toISOString().slice(0, 10)}.${format}`, body };
  }

  private async *rawBatches(filter: SearchFilter, columns: string[]): AsyncGenerator<Row[]> {
    for await (const batch of this.deps.records.iterate(filter)) yield batch.map((record) => pick(rawRow(record), columns));
  }

  private async *bucketBatches(filter: SearchFilter, unit: Exclude<ExportQuery['granularity'], 'raw' | undefined>, header: string[]): AsyncGenerator<Row[]> {
    const rows = await this.deps.stats.byBucket(filter, unit);
    yield fillBuckets(filter, unit, rows).map(({ bucket, stats }) => pick({
      bucket,
      searches: stats?.searches ?? 0,
      averageResponseTimeMs: round1(stats?.averageMs ?? 0),
      maxResponseTimeMs: stats?.maxMs ?? 0,
      averageResults: round1(stats?.averageResults ?? 0),
      zeroResultSearches: stats?.zeroResults ?? 0,
      failedSearches: stats?.failed ?? 0,
    }, header));
  }
}

/** `metrics` as a list of known columns (duplicates dropped, order kept); absent means all. */
export function parseMetrics(metrics: string | undefined, allowed: readonly string[]): string[] {
  if (metrics === undefined) return [...allowed];
  const names = [...new Set(metrics.split(',').map((name) => name.trim()).filter(Boolean))];
  const unknown = names.filter((name) => !allowed.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    const what = names.length === 0 ? 'must name at least one column' : `has unknown column(s) ${unknown.map((n) => `"${n}"`).join(', ')}`;
    throw validationError([{ location: 'query', path: '/metrics', message: `${what}; allowed for this granularity: ${allowed.join(', ')}` }]);
  }
  return names;
}

const rawRow = (record: ExportedSearch): Row => ({
  query: record.query,
  searchMode: record.searchMode,
  resultCount: record.resultCount,
  responseTimeMs: record.responseTimeMs,
  status: record.status,
  createdAt: record.createdAt,
});

const pick = (row: Row, columns: string[]): Row => Object.fromEntries(columns.map((column) => [column, row[column]!]));
const text = (cell: Cell) => (cell instanceof Date ? cell.toISOString() : cell);

/** What a spreadsheet reads as the start of a formula (OWASP "CSV injection"): `=`, `+`, `-`, `@`, tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a field with a comma, quote or line break (or edge spaces) is quoted, quotes doubled. A text cell that
 * a spreadsheet would run as a formula (a searched `=HYPERLINK(...)`) is written with a leading `'`, which makes it
 * text: the export never carries a formula. Numbers and dates are written as they are.
 */
export function csvField(cell: Cell): string {
  const raw = String(text(cell));
  const value = typeof cell === 'string' && FORMULA_START.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

async function* csv(header: string[], batches: AsyncIterable<Row[]>): AsyncGenerator<string> {
  yield header.join(',') + '\r\n';
  for await (const batch of batches) yield batch.map((row) => header.map((column) => csvField(row[column]!)).join(',') + '\r\n').join('');
}

async function* json(batches: AsyncIterable<Row[]>): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const batch of batches) {
    for (const row of batch) {
      yield (first ? '\n' : ',\n') + JSON.stringify(row);
      first = false;
    }
  }
  yield first ? ']\n' : '\n]\n';
}

const drained = (stream: PassThrough) =>
  new Promise<void>((resolve) => {
    const done = () => {
      stream.off('drain', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('close', done);
  });

/** exceljs's streaming writer: rows are committed (and zipped out) as they are added. */
function xlsx(header: string[], batches: AsyncIterable<Row[]>): Readable {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet('analytics');
  sheet.columns = header.map((column) => ({ header: column, key: column }));
  void (async () => {
    for await (const batch of batches) {
      if (out.destroyed) return; // the client went away
      for (const row of batch) sheet.addRow(row).commit();
      if (out.writableNeedDrain) await drained(out);
    }
    sheet.commit();
    await workbook.commit();
  })().catch((error: unknown) => out.destroy(error as Error));
  return out;
}
