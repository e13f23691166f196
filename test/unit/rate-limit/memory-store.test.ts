import { describe, expect, it } from 'vitest';
import { MemoryStore, perHourRule } from '../../../src/rate-limit/index.js';
import { describeStoreContract, rule } from './store-contract.js';

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

describeStoreContract('MemoryStore', () => new MemoryStore());

describe('MemoryStore memory bound', () => {
  it('when 10,000 subjects go quiet for an hour, then the sweep forgets every one of them', async () => {
    const store = new MemoryStore();
    const r = perHourRule(5);
    for (let i = 0; i < 10_000; i++) await store.consume(`ip:10.0.${i >> 8}.${i & 255}:login`, r, T0);
    expect(store.size().subjects).toBe(10_000);

    await store.consume('other', r, T0 + HOUR); // the next call after an hour sweeps on its own
    expect(store.size().subjects).toBe(1);
  });

  it('when a subject is still blocked after its requests leave the window, then it is kept until the block ends', async () => {
    const store = new MemoryStore();
    const r = rule({ limit: 1, burstLimit: 1, windowSeconds: 10, burstWindowSeconds: 10, blockSeconds: 60 });
    await store.consume('s', r, T0);
    await store.consume('s', r, T0 + 1); // blocks until T0 + 60,001
    store.sweep(T0 + 30_000);
    expect(store.size().subjects).toBe(1);
    store.sweep(T0 + 60_001);
    expect(store.size().subjects).toBe(0);
  });

  it('when leases expire without release, then the sweep drops them', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 100; i++) await store.acquireConcurrency(`conn:${i}`, 3, 'lease', T0, 30_000);
    expect(store.size().leaseSubjects).toBe(100);
    store.sweep(T0 + 30_000);
    expect(store.size().leaseSubjects).toBe(0);
  });

  it('when a subject is refused many times, then refusals add no entries', async () => {
    const store = new MemoryStore();
    const r = perHourRule(3);
    for (let i = 0; i < 1000; i++) await store.consume('s', r, T0 + i);
    expect((await store.peek('s', r, T0 + 1000)).used).toBe(3);
  });
});
