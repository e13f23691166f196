import { describe, expect, it } from 'vitest';
import { RetentionService } from '../../../../src/services/analytics/retention-service.js';

/** A store of row ages (in days) that deletes in batches, like the repositories. */
function store(ages: number[], now: number) {
  const rows = ages.map((days) => now - days * 86_400_000);
  const calls: number[] = [];
  return {
    rows,
    calls,
    async deleteOlderThan(cutoff: Date, batchSize: number) {
      const old = rows.filter((at) => at < cutoff.getTime()).slice(0, batchSize);
      for (const at of old) rows.splice(rows.indexOf(at), 1);
      calls.push(old.length);
      return old.length;
    },
  };
}

describe('RetentionService', () => {
  const now = Date.UTC(2026, 10, 22);

  it('when rows are older than the retention, then they are deleted in batches until none is left; newer rows stay', async () => {
    const searches = store([1, 10, 396, 400, 500, 900, 1000], now);
    const logs = store([394, 396], now);
    const retention = new RetentionService({ stores: { searches, logs }, retentionDays: 395, batchSize: 2, onError: () => undefined, now: () => now });
    expect(await retention.run()).toEqual({ searches: 5, logs: 1 });
    expect(searches.calls).toEqual([2, 2, 1]);
    expect(searches.rows).toHaveLength(2);
    expect(logs.rows).toHaveLength(1);
  });

  it('when a store fails, then the error is reported and the timer keeps going', async () => {
    const errors: unknown[] = [];
    const failing = { deleteOlderThan: async () => Promise.reject(new Error('locked')) };
    const retention = new RetentionService({ stores: { failing }, retentionDays: 30, onError: (e) => errors.push(e), now: () => now });
    retention.start();
    await retention.stop();
    expect(String(errors[0])).toContain('locked');
  });
});
