import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import { MemoryStore } from '../../../../src/rate-limit/index.js';
import type { UsageDelta } from '../../../../src/repositories/request-usage-repository.js';
import type { KeyCaller } from '../../../../src/services/callers.js';
import { KeyUsageCache } from '../../../../src/services/rate-limit/key-usage-cache.js';
import { LimitsService } from '../../../../src/services/rate-limit/limits-service.js';
import { RateLimitService } from '../../../../src/services/rate-limit/rate-limit-service.js';
import { UsageRecorder } from '../../../../src/services/rate-limit/usage-recorder.js';
import { ViolationRecorder } from '../../../../src/services/rate-limit/violation-recorder.js';

const hour = 3_600_000;
const caller = { kind: 'key', key: { id: 'k1', tier: 'free', customLimits: null }, user: { id: 'u1' } } as unknown as KeyCaller;

/** One process: a usage recorder and a violation recorder over a fake store, and the status the key reads. */
function process(bus = new MemoryBus()) {
  let now = Date.UTC(2026, 10, 22, 10, 30);
  const rows: UsageDelta[] = [];
  const blocks: Array<{ keyId: string; startedAt: Date }> = [];
  const reads = { usage: 0, violations: 0 };
  const cache = new KeyUsageCache(bus, 5_000);
  const usage = new UsageRecorder({
    usage: { add: async (batch) => void rows.push(...batch.map((row) => ({ ...row }))) },
    keys: { addUsage: async () => {} },
    flushMs: 60_000,
    onError: (error) => { throw error; },
    onCountedWritten: (keyIds) => keyIds.forEach((keyId) => cache.changed(keyId)),
  });
  const violations = new ViolationRecorder(
    { start: async (row: { keyId: string; startedAt: Date }) => void blocks.push(row), addAffected: async () => {}, listSince: async () => [] } as never,
    (error) => { throw error; },
    (keyId) => cache.changed(keyId),
  );
  const service = new RateLimitService({
    limits: new LimitsService({ store: new MemoryStore(), enabled: true, upgradeUrl: 'https://u', violations, now: () => now }),
    logs: {
      byBucket: async (keyId: string, since: Date) => {
        reads.usage += 1;
        const perHour = new Map<string, number>();
        for (const row of rows) {
          if (row.keyId !== keyId || row.minuteMs < since.getTime()) continue;
          const bucket = `${new Date(row.minuteMs - (row.minuteMs % hour)).toISOString().slice(0, 16)}:00Z`;
          perHour.set(bucket, (perHour.get(bucket) ?? 0) + row.counted);
        }
        return [...perHour].map(([bucket, counted]) => ({ bucket, requests: counted, averageMs: 1, rateLimited: 0, counted }));
      },
    } as never,
    violations: {
      listSince: async (keyId: string, since: Date) => (reads.violations += 1, blocks.filter((b) => b.keyId === keyId && b.startedAt >= since)),
    } as never,
    flushPending: () => usage.flush(),
    hasUnwritten: (keyId) => usage.hasUnwritten(keyId),
    cache,
    now: () => now,
  });
  const request = (counted = true) =>
    usage.record({ keyId: 'k1', userId: 'u1', endpoint: 'GET /x', status: 200, durationMs: 1, rateLimited: false, counted, at: now });
  return { service, usage, violations, reads, request, advance: (ms: number) => (now += ms) };
}

/** Past the millisecond of the last invalidation: a read begun in it is not kept (the cache cannot order them). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2));

const currentHour = async (p: ReturnType<typeof process>) => (await p.service.status(caller)).rateLimit.usage.last24Hours.at(-1)!.requests;

describe('getRateLimitStatus of a key polling it', () => {
  it('when nothing changed, then the store is read once for many calls', async () => {
    const p = process();
    p.request();
    await p.usage.flush();
    await settle();
    expect(await currentHour(p)).toBe(1);
    expect(await currentHour(p)).toBe(1);
    expect(await currentHour(p)).toBe(1);
    expect(p.reads).toEqual({ usage: 1, violations: 1 });
  });

  it("when the key's own counted request is not written yet, then it is written first and the day read again", async () => {
    const p = process();
    expect(await currentHour(p)).toBe(0);
    p.request();
    expect(await currentHour(p)).toBe(1);
    expect(p.reads.usage).toBe(2);
  });

  it('when only requests that do not count were made (status calls), then the cached day stays', async () => {
    const p = process();
    await currentHour(p);
    p.request(false);
    await p.usage.flush();
    await settle();
    await currentHour(p);
    expect(p.reads.usage).toBe(1);
  });

  it('when another process writes counted requests or a block of the key, then this process reads the day again', async () => {
    const bus = new MemoryBus();
    const [a, b] = [process(bus), process(bus)];
    await currentHour(a);
    b.request();
    await b.usage.flush();
    await currentHour(a);
    expect(a.reads.usage).toBe(2);
    b.violations.record('k1', { reason: 'burst', blockedUntil: new Date(), retryAfterSeconds: 60 } as never, new Date(), 50);
    await b.violations.drain();
    await currentHour(a);
    expect(a.reads.usage).toBe(3);
  });

  it('when an hour passes without changes, then the cached day still covers every hour shown', async () => {
    const p = process();
    p.request();
    await p.usage.flush();
    await settle();
    await currentHour(p);
    p.advance(hour);
    const status = await p.service.status(caller);
    expect(status.rateLimit.usage.last24Hours.at(-2)!.requests).toBe(1);
    expect(status.rateLimit.usage.last24Hours.at(-1)!.requests).toBe(0);
    expect(p.reads.usage).toBe(1);
  });
});
