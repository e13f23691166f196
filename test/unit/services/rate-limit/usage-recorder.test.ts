import { describe, expect, it } from 'vitest';
import type { UsageDelta } from '../../../../src/repositories/request-usage-repository.js';
import { UsageRecorder, type UsageEvent } from '../../../../src/services/rate-limit/usage-recorder.js';

const minute = (m: number, second = 0) => Date.UTC(2026, 10, 22, 10, m, second);

function recorder(options: { fail?: () => boolean; maxBuffered?: number } = {}) {
  const written: UsageDelta[][] = [];
  const updates: Array<[string, number, string]> = [];
  const errors: unknown[] = [];
  /** The retry waits' clock: each flush of a test comes a minute after the last. */
  let now = 0;
  const usage = new UsageRecorder({
    usage: {
      add: async (rows) => {
        if (options.fail?.()) throw new Error('store down');
        written.push(rows.map((row) => ({ ...row })));
      },
    },
    keys: { addUsage: async (id, count, last) => void updates.push([id, count, last.toISOString()]) },
    flushMs: 60_000,
    onError: (error) => errors.push(error),
    maxBuffered: options.maxBuffered,
    now: () => (now += 60_000),
  });
  return { usage, written, updates, errors };
}

const event = (over: Partial<UsageEvent> = {}): UsageEvent => ({
  keyId: 'k1', userId: 'u1', endpoint: 'GET /x', status: 200, durationMs: 10, rateLimited: false, counted: true, at: minute(1), ...over,
});

/** The counts of a written row, without the bookkeeping fields. */
const counts = (row: UsageDelta) => ({
  keyId: row.keyId, endpoint: row.endpoint, minuteMs: row.minuteMs, requests: row.requests, failed: row.failed, rateLimited: row.rateLimited, counted: row.counted, totalMs: row.totalMs,
});

describe('UsageRecorder', () => {
  it('when a batch is written, then each key gets one usage update with its count and last use; refused requests do not count', async () => {
    const { usage, written, updates } = recorder();
    const row = (keyId: string, m: number, rateLimited = false) =>
      event({ keyId, status: rateLimited ? 429 : 200, durationMs: 1, rateLimited, at: minute(m) });
    usage.record(row('k1', 1));
    usage.record(row('k1', 3));
    usage.record(row('k2', 2));
    usage.record(row('k2', 4, true));
    await usage.flush();
    expect(written[0]).toHaveLength(4);
    expect(updates).toEqual([['k1', 2, '2026-11-22T10:03:00.000Z'], ['k2', 1, '2026-11-22T10:02:00.000Z']]);
  });

  it('when requests share a key, endpoint and minute, then they are written as one row of sums', async () => {
    const { usage, written } = recorder();
    usage.record(event({ at: minute(1, 0), durationMs: 10 }));
    usage.record(event({ at: minute(1, 59), durationMs: 30, status: 503 }));
    usage.record(event({ at: minute(1, 30), durationMs: 1, status: 429, rateLimited: true }));
    usage.record(event({ at: minute(1, 31), durationMs: 4, counted: false }));
    usage.record(event({ at: minute(2, 0), durationMs: 5 }));
    usage.record(event({ at: minute(1, 2), endpoint: 'GET /y', durationMs: 7 }));
    expect(written).toEqual([]);
    await usage.flush();
    expect(written[0]!.map(counts)).toEqual([
      { keyId: 'k1', endpoint: 'GET /x', minuteMs: minute(1), requests: 4, failed: 2, rateLimited: 1, counted: 2, totalMs: 45 },
      { keyId: 'k1', endpoint: 'GET /x', minuteMs: minute(2), requests: 1, failed: 0, rateLimited: 0, counted: 1, totalMs: 5 },
      { keyId: 'k1', endpoint: 'GET /y', minuteMs: minute(1), requests: 1, failed: 0, rateLimited: 0, counted: 1, totalMs: 7 },
    ]);
    await usage.flush();
    expect(written).toHaveLength(1);
  });

  it('when a write fails, then its counts are kept and merged with newer ones of the same minute into one row, none counted twice', async () => {
    let down = true;
    const { usage, written, updates, errors } = recorder({ fail: () => down });
    usage.record(event({ durationMs: 10 }));
    usage.record(event({ durationMs: 20 }));
    await usage.flush();
    expect(errors).toHaveLength(1);
    // Still down: the retried batch must not be inflated by the failed attempt.
    usage.record(event({ durationMs: 1 }));
    await usage.flush();
    down = false;
    usage.record(event({ durationMs: 2, at: minute(1, 40) }));
    usage.record(event({ durationMs: 3, at: minute(5) }));
    await usage.flush();
    expect(written).toHaveLength(1);
    expect(written[0]!.map(counts)).toEqual([
      { keyId: 'k1', endpoint: 'GET /x', minuteMs: minute(1), requests: 4, failed: 0, rateLimited: 0, counted: 4, totalMs: 33 },
      { keyId: 'k1', endpoint: 'GET /x', minuteMs: minute(5), requests: 1, failed: 0, rateLimited: 0, counted: 1, totalMs: 3 },
    ]);
    expect(updates).toEqual([['k1', 5, new Date(minute(5)).toISOString()]]);
  });

  it('when the store stays down past the buffer cap, then the oldest counts are dropped and reported', async () => {
    const { usage, errors } = recorder({ fail: () => true, maxBuffered: 2 });
    for (const m of [1, 2, 3]) usage.record(event({ at: minute(m) }));
    await usage.flush();
    expect(errors.map(String).some((e) => e.includes('dropped the 1 oldest per-minute usage counts'))).toBe(true);
  });

  it('when stopped, then what was counted is written', async () => {
    const { usage, written } = recorder();
    usage.start();
    usage.record(event());
    await usage.stop();
    expect(written[0]!.map(counts)).toEqual([{ keyId: 'k1', endpoint: 'GET /x', minuteMs: minute(1), requests: 1, failed: 0, rateLimited: 0, counted: 1, totalMs: 10 }]);
  });
});
