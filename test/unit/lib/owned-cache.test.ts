import { describe, expect, it } from 'vitest';
import { OwnedCache } from '../../../src/lib/owned-cache.js';

const value = (n: number) => ({ n });

function clocked(max = 10, ttlMs = 1_000) {
  let time = 10_000;
  const cache = new OwnedCache<{ n: number }>({ max, ttlMs, now: () => time });
  return { cache, tick: (ms = 1) => (time += ms), at: () => time };
}

describe('OwnedCache', () => {
  it("when an owner is invalidated, then every entry it owns goes and other owners' stay", () => {
    const { cache, tick, at } = clocked();
    const readAt = at();
    tick();
    cache.set('k1', value(1), ['key:k1', 'user:u1'], readAt);
    cache.set('k2', value(2), ['key:k2', 'user:u1'], readAt);
    cache.set('k3', value(3), ['key:k3', 'user:u2'], readAt);
    cache.invalidate('user:u1');
    expect([cache.get('k1'), cache.get('k2'), cache.get('k3')]).toEqual([undefined, undefined, value(3)]);
  });

  it('when a read began before an invalidation of one of its owners, then what it found is not kept', () => {
    const { cache, tick, at } = clocked();
    const readAt = at();
    tick();
    cache.invalidate('key:k1');
    tick();
    expect(cache.set('k1', value(1), ['key:k1'], readAt)).toBe(false);
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.set('k1', value(1), ['key:k1'], at())).toBe(true);
  });

  it('when an entry is older than the TTL, then it is a miss', () => {
    const { cache, tick, at } = clocked(10, 1_000);
    cache.set('k', value(1), ['o'], at() - 1);
    tick(1_000);
    expect(cache.get('k')).toEqual(value(1));
    tick(1);
    expect(cache.get('k')).toBeUndefined();
  });

  it('when it is full, then the least recently used entry leaves first', () => {
    const { cache, at } = clocked(2);
    cache.set('a', value(1), ['a'], at() - 1);
    cache.set('b', value(2), ['b'], at() - 1);
    cache.get('a');
    cache.set('c', value(3), ['c'], at() - 1);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([value(1), undefined, value(3)]);
  });

  it('when more owners were invalidated than it remembers, then no read from before the forgotten mark is kept', () => {
    const { cache, tick, at } = clocked(2);
    const readAt = at();
    tick();
    for (const owner of ['o1', 'o2', 'o3']) cache.invalidate(owner); // o1's mark makes room for o3's
    tick();
    expect(cache.set('k', value(1), ['o1'], readAt)).toBe(false);
    expect(cache.set('k', value(1), ['o1'], at())).toBe(true);
  });

  it('when everything is invalidated, then every entry goes and no read in flight is kept', () => {
    const { cache, tick, at } = clocked();
    const readAt = at();
    tick();
    cache.set('k', value(1), ['o'], readAt);
    cache.invalidateAll();
    expect(cache.get('k')).toBeUndefined();
    expect(cache.set('k', value(1), ['o'], readAt)).toBe(false);
  });
});
