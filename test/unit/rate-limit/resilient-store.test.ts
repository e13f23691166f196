import { describe, expect, it, vi } from 'vitest';
import {
  MemoryStore, perHourRule, ResilientStore, type RateLimitStore,
} from '../../../src/rate-limit/index.js';

const T0 = Date.UTC(2030, 0, 1);
const rule = perHourRule(2);

/** A primary store that can be switched between working, failing and hanging, like a Redis that comes and goes. */
function flakyPrimary() {
  const inner = new MemoryStore();
  const control = { mode: 'up' as 'up' | 'error' | 'hang', calls: 0 };
  const gate = async <T>(work: () => Promise<T>): Promise<T> => {
    control.calls++;
    if (control.mode === 'error') throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    if (control.mode === 'hang') return new Promise<T>(() => {});
    return work();
  };
  const store: RateLimitStore = {
    consume: (s, r, n) => gate(() => inner.consume(s, r, n)),
    consumeAll: (c, n) => gate(() => inner.consumeAll(c, n)),
    peek: (s, r, n) => gate(() => inner.peek(s, r, n)),
    refund: (s, a) => gate(() => inner.refund(s, a)),
    acquireConcurrency: (s, m, l, n, t) => gate(() => inner.acquireConcurrency(s, m, l, n, t)),
    releaseConcurrency: (s, l) => gate(() => inner.releaseConcurrency(s, l)),
    ping: () => gate(async () => true),
    status: () => ({ mode: 'redis', redisUp: control.mode === 'up', lastError: null }),
    close: async () => {},
  };
  return { store, control, inner };
}

function setup() {
  const primary = flakyPrimary();
  const clock = { now: 0 };
  const onError = vi.fn();
  const onRecover = vi.fn();
  const store = new ResilientStore({
    primary: primary.store, timeoutMs: 20, retryIntervalMs: 1000, onError, onRecover, clock: () => clock.now,
  });
  return { store, primary, clock, onError, onRecover };
}

describe('ResilientStore', () => {
  it('when the primary answers, then decisions come from it and the status is redis/up', async () => {
    const { store, primary } = setup();
    expect(await store.consume('s', rule, T0)).toMatchObject({ allowed: true });
    expect((await primary.inner.peek('s', rule, T0)).used).toBe(1);
    expect(store.status()).toEqual({ mode: 'redis', redisUp: true, lastError: null });
  });

  it('when consumeAll is given subjects of two accounts, then it throws and Redis is not taken for down', async () => {
    const { store, primary, onError } = setup();
    const checks = [{ subject: '{account:a}:key:k', rule }, { subject: '{account:b}:requests', rule }];
    await expect(store.consumeAll(checks, T0)).rejects.toThrow(/one hash tag/);
    expect(primary.control.calls).toBe(0);
    expect(onError).not.toHaveBeenCalled();
    expect(store.status().mode).toBe('redis');
  });

  it('when the primary errors, then the decision comes from memory, nothing throws and onError is called once per outage', async () => {
    const { store, primary, onError } = setup();
    primary.control.mode = 'error';
    const decisions = await Promise.all([1, 2, 3].map(() => store.consume('s', rule, T0)));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]); // per-process limit of 2 still holds
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(Error);
    expect(store.status()).toEqual({ mode: 'memory', redisUp: false, lastError: 'connect ECONNREFUSED 127.0.0.1:6379' });
  });

  it('when the primary hangs, then the call times out into memory quickly', async () => {
    const { store, primary } = setup();
    primary.control.mode = 'hang';
    const started = Date.now();
    expect(await store.consume('s', rule, T0)).toMatchObject({ allowed: true });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(store.status().lastError).toMatch(/did not answer within 20 ms/);
  });

  it('when Redis is down, then requests do not wait on it and it is probed at most once per retry interval', async () => {
    const { store, primary, clock } = setup();
    primary.control.mode = 'error';
    await store.consume('s', rule, T0);
    const callsAfterOutage = primary.control.calls;
    for (let i = 0; i < 10; i++) await store.peek('s', rule, T0);
    expect(primary.control.calls).toBe(callsAfterOutage);
    clock.now = 1000;
    await store.peek('s', rule, T0);
    await store.peek('s', rule, T0);
    expect(primary.control.calls).toBe(callsAfterOutage + 1); // one background ping
  });

  it('when Redis answers again, then the store recovers and uses it', async () => {
    const { store, primary, clock, onError, onRecover } = setup();
    primary.control.mode = 'error';
    await store.consume('s', rule, T0);
    primary.control.mode = 'up';
    clock.now = 1000;
    await store.consume('s', rule, T0); // still memory; kicks off the probe
    await vi.waitFor(() => expect(store.status().mode).toBe('redis'));
    expect(onRecover).toHaveBeenCalledTimes(1);
    await store.consume('s', rule, T0);
    expect((await primary.inner.peek('s', rule, T0)).used).toBe(1);

    primary.control.mode = 'error'; // a second outage is reported again
    await store.consume('s', rule, T0);
    expect(onError).toHaveBeenCalledTimes(2);
  });

  it('when the health check pings, then the status follows the answer', async () => {
    const { store, primary } = setup();
    primary.control.mode = 'error';
    expect(await store.ping()).toBe(false);
    expect(store.status().redisUp).toBe(false);
    primary.control.mode = 'up';
    expect(await store.ping()).toBe(true);
    expect(store.status()).toMatchObject({ mode: 'redis', redisUp: true });
  });

  it('when onError itself throws, then the caller still gets a decision', async () => {
    const primary = flakyPrimary();
    primary.control.mode = 'error';
    const store = new ResilientStore({ primary: primary.store, onError: () => { throw new Error('logger down'); } });
    await expect(store.consume('s', rule, T0)).resolves.toMatchObject({ allowed: true });
  });

  it('when a lease taken during an outage is released after recovery, then the memory slot is freed too', async () => {
    const { store, primary } = setup();
    primary.control.mode = 'error';
    expect(await store.acquireConcurrency('c', 1, 'a', T0, 30_000)).toBe(true);
    primary.control.mode = 'up';
    await store.ping();
    await store.releaseConcurrency('c', 'a');
    primary.control.mode = 'error';
    expect(await store.acquireConcurrency('c', 1, 'b', T0, 30_000)).toBe(true);
  });
});
