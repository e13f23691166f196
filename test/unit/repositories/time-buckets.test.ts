import { describe, expect, it } from 'vitest';
import { bucketDate, bucketRange, bucketStart } from '../../../src/repositories/time-buckets.js';

describe('time buckets', () => {
  const at = new Date('2026-11-22T10:37:12.123Z'); // a Sunday

  it.each([
    ['minute', '2026-11-22T10:37:00Z'],
    ['hour', '2026-11-22T10:00:00Z'],
    ['day', '2026-11-22'],
    ['week', '2026-11-16'],
    ['month', '2026-11-01'],
  ] as const)('when truncated to a %s, then %s', (unit, expected) => {
    expect(bucketStart(at, unit)).toBe(expected);
  });

  it('when a range is listed, then every bucket appears once, empty ones included', () => {
    expect(bucketRange(new Date('2026-11-20T23:59:00Z'), at, 'day')).toEqual(['2026-11-20', '2026-11-21', '2026-11-22']);
    expect(bucketRange(new Date('2026-11-22T08:10:00Z'), at, 'hour')).toHaveLength(3);
    expect(bucketRange(new Date('2026-09-30T00:00:00Z'), at, 'month')).toEqual(['2026-09-01', '2026-10-01', '2026-11-01']);
  });

  it('when a label is turned back into a date, then it is the bucket start in UTC', () => {
    expect(bucketDate('2026-11-22').toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(bucketDate('2026-11-22T10:00:00Z').toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });
});
