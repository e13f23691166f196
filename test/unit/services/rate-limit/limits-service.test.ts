import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/app-error.js';
import { MemoryStore } from '../../../../src/rate-limit/index.js';
import type { KeyCaller } from '../../../../src/services/callers.js';
import { LimitsService, type LimitRequest, type OperationLimit } from '../../../../src/services/rate-limit/limits-service.js';

/** A key of an account whose plan is the key's tier (a key's tier is at most its account's plan). */
const key = (tier: 'free' | 'pro' | 'enterprise', id = 'key_1') =>
  ({ kind: 'key', key: { id, tier, customLimits: null, permissions: ['search'] }, user: { id: 'usr_1', plan: tier } }) as unknown as KeyCaller;

function request(caller: KeyCaller | null, operationLimit: OperationLimit = undefined): LimitRequest {
  return { operationId: 'op', operationLimit, ip: '10.0.0.1', userId: null, key: caller, requestId: Math.random().toString(36) };
}

const service = (now = () => 1_000_000) =>
  new LimitsService({ store: new MemoryStore(), enabled: true, upgradeUrl: 'https://u', violations: { record() {} }, now });

/** A publishable key of the custom limits `requestsPerHour` (one request per visitor IP per `perIp`). */
const publishable = (requestsPerHour: number, perIp: number) =>
  ({ kind: 'key', key: { id: 'key_pk', kind: 'publishable', tier: 'free', customLimits: { requestsPerHour, burstLimit: requestsPerHour }, requestsPerIpPerHour: perIp, permissions: ['search'] }, user: { id: 'usr_1' } }) as unknown as KeyCaller;

const fromIp = (caller: KeyCaller, ip: string): LimitRequest => ({ ...request(caller), ip });

describe('LimitsService', () => {
  it('when a visitor uses up a publishable key\'s per-IP limit, then they are refused and their refused requests leave the key\'s allowance to others', async () => {
    const limits = service();
    const caller = publishable(5, 2);
    const outcome = async (ip: string) => {
      try {
        const admission = await limits.admit(fromIp(caller, ip));
        admission.release?.();
        return { code: 'ok', window: admission.window, retryAfter: undefined };
      } catch (error) {
        const refusal = error as AppError;
        return { code: refusal.code, window: refusal.facts.rateLimit, retryAfter: refusal.facts.retryAfterSeconds };
      }
    };
    const a = [await outcome('10.0.0.1'), await outcome('10.0.0.1'), await outcome('10.0.0.1'), await outcome('10.0.0.1')];
    expect(a.map((o) => o.code)).toEqual(['ok', 'ok', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED']);
    // The visitor's own limit is the window reported while it is the tighter one.
    expect(a[1]!.window).toMatchObject({ limit: 2, remaining: 0 });
    expect(a[2]!.window).toMatchObject({ limit: 2, remaining: 0 });
    expect(a[2]!.retryAfter).toBeGreaterThan(0);
    // 2 of the key's 5 are spent: two more visitors get 2 and 1, then the key itself is full.
    const b = [await outcome('10.0.0.2'), await outcome('10.0.0.2')];
    const c = [await outcome('10.0.0.3'), await outcome('10.0.0.3')];
    expect([...b, ...c].map((o) => o.code)).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
    expect(c[0]!.window).toMatchObject({ limit: 5, remaining: 0 });
  });

  it('when a secret key is used from many IPs, then only its own limit applies', async () => {
    const limits = service();
    const admission = await limits.admit(fromIp(key('free'), '10.0.0.9'));
    expect(admission.window).toMatchObject({ limit: 1000, remaining: 999 });
  });

  it('when a free key has 3 requests in flight, then a 4th is refused with CONCURRENCY_LIMIT_EXCEEDED until one finishes', async () => {
    const limits = service();
    const caller = key('free');
    const inFlight = [];
    for (let i = 0; i < 3; i += 1) inFlight.push(await limits.admit(request(caller)));
    const refusal = await limits.admit(request(caller)).catch((error) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'CONCURRENCY_LIMIT_EXCEEDED', details: { limit: 3, tier: 'free' }, facts: { retryAfterSeconds: 1 } });
    inFlight[0]!.release!();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(limits.admit(request(caller))).resolves.toMatchObject({ counted: true });
  });

  it('when the operation is exempt, then the window is reported without consuming it', async () => {
    const limits = service();
    const caller = key('pro');
    await limits.admit(request(caller));
    const exempt = await limits.admit(request(caller, 'exempt'));
    expect(exempt).toMatchObject({ counted: false, release: null, window: { limit: 10_000, remaining: 9999, tier: 'pro', windowSeconds: 3600 } });
    expect((await limits.admit(request(caller))).window?.remaining).toBe(9998);
  });

  it('when an operation has its own per-IP limit, then the sixth request of an address is refused with the window and Retry-After', async () => {
    const limits = service();
    const limit: OperationLimit = { scope: 'ip', limit: 5 };
    for (let i = 0; i < 5; i += 1) await limits.admit(request(null, limit));
    await expect(limits.admit(request(null, limit))).rejects.toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      facts: { retryAfterSeconds: expect.any(Number), rateLimit: { limit: 5, remaining: 0, tier: 'anonymous' } },
    });
  });

  it('when a free key makes its 101st semantic search within the hour, then AI_RATE_LIMIT_EXCEEDED', async () => {
    let now = 5_000_000;
    const limits = service(() => now);
    const caller = key('free');
    for (let i = 0; i < 100; i += 1) await limits.admitAiRequest(caller);
    await expect(limits.admitAiRequest(caller)).rejects.toMatchObject({ code: 'AI_RATE_LIMIT_EXCEEDED', facts: { retryAfterSeconds: expect.any(Number) } });
    now += 3_600_001;
    await expect(limits.admitAiRequest(caller)).resolves.toBeUndefined();
  });

  it('when limiting is disabled, then nothing is counted or refused', async () => {
    const limits = new LimitsService({ store: new MemoryStore(), enabled: false, upgradeUrl: 'https://u', violations: { record() {} } });
    const caller = key('free');
    for (let i = 0; i < 60; i += 1) {
      expect(await limits.admit(request(caller))).toEqual({ window: null, counted: true, release: null, refund: null });
    }
  });
});
