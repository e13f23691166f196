import { describe, expect, it } from 'vitest';
import { MemoryResultCache } from '../../../../src/services/search/result-cache.js';
import { TtlCache } from '../../../../src/lib/ttl-cache.js';

describe('MemoryResultCache', () => {
  it('when an entry is older than the TTL, then it is a miss', async () => {
    let now = 1_000;
    const cache = new MemoryResultCache(1000, 10, () => now);
    await cache.set('k', 'v', ['db_1']);
    expect(await cache.get('k')).toBe('v');
    now = 2_001;
    expect(await cache.get('k')).toBeNull();
  });

  it('when a connection changes, then every entry that read it goes and no other', async () => {
    const cache = new MemoryResultCache(60_000);
    await cache.set('a', '1', ['db_1', 'db_2']);
    await cache.set('b', '2', ['db_2']);
    await cache.set('c', '3', ['db_3']);
    await cache.forgetDatabase('db_2');
    expect([await cache.get('a'), await cache.get('b'), await cache.get('c')]).toEqual([null, null, '3']);
  });

  it('when it is full, then the least recently used entry goes first', async () => {
    const cache = new MemoryResultCache(60_000, 2);
    await cache.set('a', '1', []);
    await cache.set('b', '2', []);
    await cache.get('a');
    await cache.set('c', '3', []);
    expect([await cache.get('a'), await cache.get('b'), await cache.get('c')]).toEqual(['1', null, '3']);
  });
});

describe('TtlCache', () => {
  it('when it is full, then the least recently used connection leaves first, not the first stored', async () => {
    const cache = new TtlCache<string>(60_000, 2);
    const load = (value: string) => async () => value;
    await cache.get('a', 's', load('a1'));
    await cache.get('b', 's', load('b1'));
    await cache.get('a', 's', load('a2')); // a is used again
    await cache.get('c', 's', load('c1')); // full: b leaves
    expect([await cache.get('a', 's', load('a3')), await cache.get('b', 's', load('b2'))]).toEqual(['a1', 'b2']);
  });

  it('when an entry is older than the TTL, then it is loaded again', async () => {
    let now = 1_000;
    const cache = new TtlCache<number>(1000, 10, () => now);
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('x', 's', load);
    now = 1_900;
    expect(await cache.get('x', 's', load)).toBe(1);
    now = 2_001;
    expect(await cache.get('x', 's', load)).toBe(2);
  });

  it('when callers ask at once, then one load serves them; a changed stamp or a failure loads again', async () => {
    const cache = new TtlCache<number>(60_000);
    let loads = 0;
    const load = async () => ++loads;
    expect(await Promise.all([cache.get('x', 's1', load), cache.get('x', 's1', load)])).toEqual([1, 1]);
    expect(await cache.get('x', 's2', load)).toBe(2);
    await expect(cache.get('y', 's', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('y', 's', load)).toBe(3);
  });
});
