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

  it('when cutoffs move forward, jump back or far ahead between calls, then every answer equals a plain scan', () => {
    // A seeded generator, so a failure repeats.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const log = new TimestampLog();
    let kept: number[] = [];
    let now = 1_000;
    for (let step = 0; step < 20_000; step++) {
      now += Math.floor(random() * 5);
      const ts = random() < 0.05 ? now - Math.floor(random() * 50) : now; // some arrive out of order
      log.add(ts);
      kept.push(ts);
      kept.sort((a, b) => a - b);
      if (random() < 0.3) {
        const cutoff = now - 2_000;
        log.dropUpTo(cutoff);
        kept = kept.filter((t) => t > cutoff);
      }
      const cutoffs = [now - 2_000, now - 100, now - Math.floor(random() * 3_000), now + 1];
      for (const cutoff of cutoffs) {
        const after = kept.filter((t) => t > cutoff);
        expect(log.countAfter(cutoff)).toBe(after.length);
        if (after.length > 0) {
          const n = Math.floor(random() * after.length);
          expect(log.nthAfter(cutoff, 0)).toBe(after[0]);
          expect(log.nthAfter(cutoff, n)).toBe(after[n]);
          expect(log.nthAfter(cutoff, after.length - 1)).toBe(after[after.length - 1]);
        }
        expect(() => log.nthAfter(cutoff, after.length)).toThrow(RangeError);
      }
      expect(log.newest()).toBe(kept.length ? kept[kept.length - 1] : null);
    }
    expect(log.size).toBe(kept.length);
    expect(log.entries).toBe(new Set(kept).size);
  });

  it('when many requests share a millisecond, then the log holds one entry per millisecond and still counts each', () => {
    const log = new TimestampLog();
    for (let ms = 1; ms <= 1000; ms++) for (let i = 0; i < 25; i++) log.add(ms);
    expect(log.size).toBe(25_000);
    expect(log.entries).toBe(1000);
    expect(log.countAfter(500)).toBe(12_500);
    expect(log.nthAfter(500, 24)).toBe(501);
    expect(log.nthAfter(500, 25)).toBe(502);
    log.dropUpTo(900);
    expect(log.size).toBe(2500);
    log.add(950); // out of order, into an existing millisecond
    log.add(949.5); // out of order, a new one between two
    expect(log.countAfter(949)).toBe(51 * 25 + 2);
    expect(log.nthAfter(949, 0)).toBe(949.5);
    expect(log.nthAfter(949, 1)).toBe(950);
    expect(log.nthAfter(949, 26)).toBe(950);
    expect(log.nthAfter(949, 27)).toBe(951);
    expect(log.entries).toBe(101);
  });

  it('when asked for an entry that does not exist, then it throws a RangeError', () => {
    expect(() => new TimestampLog().nthAfter(0, 0)).toThrow(RangeError);
  });
});
