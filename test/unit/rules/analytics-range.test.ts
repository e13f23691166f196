import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors/app-error.js';
import { resolveRange, unitFor } from '../../../src/rules/analytics-range.js';

const now = new Date('2026-11-22T10:37:00Z'); // a Sunday
const day = (iso: string) => new Date(`${iso}T00:00:00Z`);

function problem(run: () => unknown): { path: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('VALIDATION_ERROR');
    return ((error as AppError).details.errors as Array<{ path: string; message: string }>)[0]!;
  }
  throw new Error('no error thrown');
}

describe('resolveRange', () => {
  it('when nothing is given, then the week ending today, whole UTC days, with the week before it', () => {
    const range = resolveRange({}, now);
    expect(range).toMatchObject({ label: 'week', startDate: '2026-11-16', endDate: '2026-11-22', days: 7, unit: 'day' });
    expect(range.from).toEqual(day('2026-11-16'));
    expect(range.to).toEqual(day('2026-11-23'));
    expect(range.previous).toEqual({ from: day('2026-11-09'), to: day('2026-11-16') });
  });

  it.each([
    ['day', 1, '2026-11-22', 'day'],
    ['week', 7, '2026-11-16', 'day'],
    ['month', 30, '2026-10-24', 'week'],
    ['3months', 90, '2026-08-25', 'week'],
    ['6months', 180, '2026-05-27', 'month'],
    ['year', 365, '2025-11-23', 'month'],
  ] as const)('when period is %s, then %i days from %s, one point per %s', (period, days, startDate, unit) => {
    expect(resolveRange({ period }, now)).toMatchObject({ label: period, days, startDate, endDate: '2026-11-22', unit });
  });

  it('when endDate is given without startDate, then the period ends there', () => {
    expect(resolveRange({ endDate: '2026-10-31', period: 'week' }, now)).toMatchObject({ startDate: '2026-10-25', endDate: '2026-10-31', label: 'week' });
  });

  it('when startDate is given, then it overrides the period and the label is the range', () => {
    expect(resolveRange({ startDate: '2026-11-01', period: 'day' }, now)).toMatchObject({ label: '2026-11-01/2026-11-22', days: 22, unit: 'week' });
    expect(resolveRange({ startDate: '2026-11-20', endDate: '2026-11-20' }, now)).toMatchObject({ days: 1, unit: 'day' });
  });

  it('when the range is 366 days, then it is accepted; 367 is refused on /startDate', () => {
    expect(resolveRange({ startDate: '2025-11-22', endDate: '2026-11-22' }, now).days).toBe(366);
    expect(problem(() => resolveRange({ startDate: '2025-11-21', endDate: '2026-11-22' }, now))).toEqual({
      location: 'query', path: '/startDate', message: 'must be at most 366 days before endDate (the range spans 367 days)',
    });
  });

  it('when endDate is before startDate, then 400 on /endDate', () => {
    expect(problem(() => resolveRange({ startDate: '2026-11-10', endDate: '2026-11-09' }, now)).path).toBe('/endDate');
  });

  it('when a date is after today (UTC), then 400 naming today', () => {
    expect(problem(() => resolveRange({ endDate: '2026-11-23' }, now))).toMatchObject({ path: '/endDate', message: 'is in the future (today is 2026-11-22, UTC)' });
    expect(problem(() => resolveRange({ startDate: '2026-12-01' }, now)).path).toBe('/startDate');
  });

  it('when a date is not a calendar day, then 400 saying so', () => {
    expect(problem(() => resolveRange({ startDate: '2026-02-30' }, now)).message).toMatch(/calendar day/);
    expect(problem(() => resolveRange({ endDate: '22/11/2026' }, now)).path).toBe('/endDate');
  });

  it('when ranges grow, then series go from days to weeks to months at 14 and 92 days', () => {
    expect([1, 14, 15, 92, 93, 366].map(unitFor)).toEqual(['day', 'day', 'week', 'week', 'month', 'month']);
  });
});
