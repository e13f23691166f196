import { describe, expect, it } from 'vitest';
import { TimestampLog } from '../../../src/rate-limit/timestamp-log.js';

describe('TimestampLog', () => {
  it('when timestamps arrive out of order, then they are kept in order', () => {
    const log = new TimestampLog();
    for (const ts of [10, 30, 20, 5, 30]) log.add(ts);
    expect([0, 1, 2, 3, 4].map((n) => log.nthAfter(0, n))).toEqual([5, 10, 20, 30, 30]);
  });

  it('when entries up to a cutoff are dropped, then counts start after the cutoff', () => {
    const log = new TimestampLog();
    for (let ts = 1; ts <= 10; ts++) log.add(ts);
    log.dropUpTo(4);
    expect(log.size).toBe(6);
    expect(log.countAfter(0)).toBe(6);
    expect(log.countAfter(8)).toBe(2);
    expect(log.nthAfter(0, 0)).toBe(5);
    expect(log.newest()).toBe(10);
  });

  it('when most of a long log has expired, then it is compacted and still answers correctly', () => {
    const log = new TimestampLog();
    for (let ts = 1; ts <= 5000; ts++) log.add(ts);
    log.dropUpTo(4000);
    log.add(6000);
    expect(log.size).toBe(1001);
    expect(log.nthAfter(4500, 0)).toBe(4501);
    expect(log.nthAfter(0, 1000)).toBe(6000);
  });

  it('when asked for an entry that does not exist, then it throws a RangeError', () => {
    expect(() => new TimestampLog().nthAfter(0, 0)).toThrow(RangeError);
  });
});
