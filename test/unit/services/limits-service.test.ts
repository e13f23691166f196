import type { Context } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import type { HandlerEnv } from '../../../src/api/types.js';
import { AppError } from '../../../src/errors/app-error.js';
import { MemoryStore } from '../../../src/rate-limit/index.js';
import type { KeyCaller } from '../../../src/services/callers.js';
import { LimitsService } from '../../../src/services/limits-service.js';

const key = (tier: 'free' | 'pro' | 'enterprise', id = 'key_1') =>
  ({ kind: 'key', key: { id, tier, customLimits: null, permissions: ['search'] }, user: { id: 'usr_1' } }) as unknown as KeyCaller;

function request(caller: KeyCaller, operation: Record<string, unknown> = {}, requestId = Math.random().toString(36)) {
  const state = { requestId, responseHeaders: {} as Record<string, string>, onDone: [] as Array<() => void> };
  const env = { services: {}, state, requestId, ip: '10.0.0.1', keyCaller: caller } as unknown as HandlerEnv;
  const c = { operation: { operationId: 'op', security: [{ apiKey: [] }], ...operation }, security: { authorized: true, apiKey: caller } } as unknown as Context;
  return { c, env, state };
}

const service = (now = () => 1_000_000) =>
  new LimitsService({ store: new MemoryStore(), enabled: true, upgradeUrl: 'https://u', violations: { record() {} }, now });

/** A publishable key of the custom limits `requestsPerHour` (one request per visitor IP per `perIp`). */
const publishable = (requestsPerHour: number, perIp: number) =>
  ({ kind: 'key', key: { id: 'key_pk', kind: 'publishable', tier: 'free', customLimits: { requestsPerHour, burstLimit: requestsPerHour }, requestsPerIpPerHour: perIp, permissions: ['search'] }, user: { id: 'usr_1' } }) as unknown as KeyCaller;

function fromIp(caller: KeyCaller, ip: string) {
  const r = request(caller);
  (r.env as { ip: string }).ip = ip;
  return r;
}

describe('LimitsService', () => {
  it('when a visitor uses up a publishable key\'s per-IP limit, then they are refused and their refused requests leave the key\'s allowance to others', async () => {
    const limits = service();
    const caller = publishable(5, 2);
    const outcome = async (ip: string) => {
      const r = fromIp(caller, ip);
      const error = await limits.admit(r.c, r.env).then(() => null, (e: AppError) => e);
      r.state.onDone.forEach((done) => done());
      return { code: error?.code ?? 'ok', headers: r.state.responseHeaders };
    };
    const a = [await outcome('10.0.0.1'), await outcome('10.0.0.1'), await outcome('10.0.0.1'), await outcome('10.0.0.1')];
    expect(a.map((o) => o.code)).toEqual(['ok', 'ok', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED']);
    // The visitor's own limit is what their headers report while it is the tighter one.
    expect(a[1].headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' });
    expect(a[2].headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'Retry-After': expect.any(String) });
    // 2 of the key's 5 are spent: two more visitors get 2 and 1, then the key itself is full.
    const b = [await outcome('10.0.0.2'), await outcome('10.0.0.2')];
    const c = [await outcome('10.0.0.3'), await outcome('10.0.0.3')];
    expect([...b, ...c].map((o) => o.code)).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
    expect(c[0].headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0' });
  });

  it('when a secret key is used from many IPs, then only its own limit applies', async () => {
    const limits = service();
    const caller = key('free');
    const r = fromIp(caller, '10.0.0.9');
    await limits.admit(r.c, r.env);
    expect(r.state.responseHeaders).toMatchObject({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999' });
  });

  it('when a free key has 3 requests in flight, then a 4th is refused with CONCURRENCY_LIMIT_EXCEEDED until one finishes', async () => {
    const limits = service();
    const caller = key('free');
    const inFlight = [request(caller), request(caller), request(caller)];
    for (const r of inFlight) await limits.admit(r.c, r.env);
    const fourth = request(caller);
    const refusal = await limits.admit(fourth.c, fourth.env).catch((error) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'CONCURRENCY_LIMIT_EXCEEDED', status: 429, details: { limit: 3, tier: 'free' } });
    inFlight[0].state.onDone.forEach((done) => done());
    await new Promise((resolve) => setImmediate(resolve));
    const fifth = request(caller);
    await expect(limits.admit(fifth.c, fifth.env)).resolves.toBeUndefined();
  });

  it('when the operation is exempt, then headers are set from the window without consuming it', async () => {
    const limits = service();
    const caller = key('pro');
    const counted = request(caller);
    await limits.admit(counted.c, counted.env);
    const exempt = request(caller, { 'x-quarry-rate-limit': 'exempt' });
    await limits.admit(exempt.c, exempt.env);
    expect(exempt.state.responseHeaders['x-ratelimit-remaining']).toBe('9999');
    expect(exempt.state.onDone).toHaveLength(0);
    const next = request(caller);
    await limits.admit(next.c, next.env);
    expect(next.state.responseHeaders['x-ratelimit-remaining']).toBe('9998');
  });

  it('when a free key makes its 101st semantic search within the hour, then AI_RATE_LIMIT_EXCEEDED', async () => {
    let now = 5_000_000;
    const limits = service(() => now);
    const caller = key('free');
    for (let i = 0; i < 100; i += 1) await limits.admitAiRequest(caller);
    await expect(limits.admitAiRequest(caller)).rejects.toMatchObject({ code: 'AI_RATE_LIMIT_EXCEEDED', status: 429 });
    now += 3_600_001;
    await expect(limits.admitAiRequest(caller)).resolves.toBeUndefined();
  });

  it('when limiting is disabled, then nothing is counted or refused', async () => {
    const limits = new LimitsService({ store: new MemoryStore(), enabled: false, upgradeUrl: 'https://u', violations: { record() {} } });
    const caller = key('free');
    for (let i = 0; i < 60; i += 1) {
      const r = request(caller);
      await limits.admit(r.c, r.env);
      expect(r.state.responseHeaders).toEqual({});
    }
  });
});
