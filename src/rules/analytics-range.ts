import { validationError, type FieldProblem } from '../errors/app-error.js';
import type { BucketUnit } from '../repositories/time-buckets.js';

/** Days covered by each `period` (the range ends at endDate, today by default). */
export const PERIOD_DAYS = { day: 1, week: 7, month: 30, '3months': 90, '6months': 180, year: 365 } as const;
export type AnalyticsPeriod = keyof typeof PERIOD_DAYS;

/** Longest range a read may cover, first and last day included. */
export const MAX_RANGE_DAYS = 366;

const dayMs = 86_400_000;

/** Rates, averages and shares are shown to one decimal. */
export const round1 = (value: number) => Math.round(value * 10) / 10;

export interface RangeQuery {
  startDate?: string;
  endDate?: string;
  period?: AnalyticsPeriod;
}

/** A resolved analytics range: whole UTC days, [from, to), and the period of equal length before it. */
export interface AnalyticsRange {
  /** The period name, or `<startDate>/<endDate>` when startDate was given. */
  label: string;
  startDate: string;
  endDate: string;
  from: Date;
  /** Exclusive: the midnight after endDate. */
  to: Date;
  days: number;
  /** Time-series resolution: day up to 14 days, week up to 92 days, month beyond. */
  unit: Extract<BucketUnit, 'day' | 'week' | 'month'>;
  previous: { from: Date; to: Date };
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** A YYYY-MM-DD that is a real calendar day, as UTC midnight; null otherwise. */
function parseDay(text: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const at = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(at.getTime()) || isoDay(at) !== text ? null : at;
}

export function unitFor(days: number): AnalyticsRange['unit'] {
  return days <= 14 ? 'day' : days <= 92 ? 'week' : 'month';
}

/**
 * The common startDate/endDate/period parameters of the analytics operations (openapi.yaml, StartDate, EndDate,
 * AnalyticsPeriod). endDate defaults to today (UTC); without startDate the range is the `period` ending at
 * endDate. Days in the future, an end before the start and ranges over 366 days are 400 VALIDATION_ERROR.
 */
export function resolveRange(query: RangeQuery, now: Date, defaultPeriod: AnalyticsPeriod = 'week'): AnalyticsRange {
  const today = parseDay(isoDay(now))!;
  const problems: FieldProblem[] = [];
  const read = (name: 'startDate' | 'endDate'): Date | null => {
    const text = query[name];
    if (text === undefined) return null;
    const day = parseDay(text);
    if (!day) problems.push({ location: 'query', path: `/${name}`, message: `must be a calendar day as YYYY-MM-DD, got "${text}"` });
    else if (day > today) problems.push({ location: 'query', path: `/${name}`, message: `is in the future (today is ${isoDay(today)}, UTC)` });
    return day;
  };
  const start = read('startDate');
  const end = read('endDate') ?? (query.endDate === undefined ? today : null);
  const period = query.period ?? defaultPeriod;
  if (problems.length === 0 && start && end) {
    if (end < start) problems.push({ location: 'query', path: '/endDate', message: `must not be before startDate (${isoDay(start)})` });
    else if ((end.getTime() - start.getTime()) / dayMs + 1 > MAX_RANGE_DAYS) {
      problems.push({ location: 'query', path: '/startDate', message: `must be at most ${MAX_RANGE_DAYS} days before endDate (the range spans ${(end.getTime() - start.getTime()) / dayMs + 1} days)` });
    }
  }
  if (problems.length > 0) throw validationError(problems as [FieldProblem, ...FieldProblem[]]);

  const from = start ?? new Date(end!.getTime() - (PERIOD_DAYS[period] - 1) * dayMs);
  const to = new Date(end!.getTime() + dayMs);
  const days = Math.round((to.getTime() - from.getTime()) / dayMs);
  return {
    label: start ? `${isoDay(from)}/${isoDay(end!)}` : period,
    startDate: isoDay(from),
    endDate: isoDay(end!),
    from,
    to,
    days,
    unit: unitFor(days),
    previous: { from: new Date(from.getTime() - days * dayMs), to: from },
  };
}
