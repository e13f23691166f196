import { describe, expect, it, vi } from 'vitest';
import type { VectorPageRow } from '../../../src/repositories/semantic-vector-repository.js';
import { VectorCache } from '../../../src/semantic/vector-cache.js';
import { toBlob } from '../../../src/semantic/vectors.js';
import { vectorOf } from './support.js';

/** A fake store of `n` vectors per table, served in id order. */
function store(n: number) {
  const rows: VectorPageRow[] = Array.from({ length: n }, (_, i) => ({ id: i + 1, primaryKey: `{"id":${i + 1}}`, vector: toBlob(vectorOf(`row ${i + 1}`)) }));
  return {
    countFor: vi.fn(async () => n),
    page: vi.fn(async (_c: string, _t: string, _p: string, afterId: number, limit: number) => rows.filter((row) => row.id > afterId).slice(0, limit)),
  };
}

describe('VectorCache', () => {
  it('when a table is loaded, then its vectors form one contiguous row-major matrix with the row keys in order', async () => {
    const repo = store(12_000);
    const table = await new VectorCache(repo).get('db_1', 'docs', 'fake', 'job1');
    expect(table).toMatchObject({ dims: 8, count: 12_000, version: 'job1' });
    expect(table.matrix).toHaveLength(12_000 * 8);
    expect(Array.from(table.matrix.subarray(8 * 11_999))).toEqual(Array.from(vectorOf('row 12000')));
    expect(table.keys[0]).toBe('{"id":1}');
    expect(repo.page).toHaveBeenCalledTimes(3); // 5,000 rows a page
  });

  it('when asked again for the same version (even concurrently), then the store is read once; a new version reloads', async () => {
    const repo = store(10);
    const cache = new VectorCache(repo);
    const [a, b] = await Promise.all([cache.get('db_1', 'docs', 'fake', 'job1'), cache.get('db_1', 'docs', 'fake', 'job1')]);
    expect(a).toBe(b);
    expect(await cache.get('db_1', 'docs', 'fake', 'job1')).toBe(a);
    expect(repo.countFor).toHaveBeenCalledTimes(1);
    expect(await cache.get('db_1', 'docs', 'fake', 'job2')).not.toBe(a);
    expect(repo.countFor).toHaveBeenCalledTimes(2);
  });

  it('when over budget, then the least recently used table leaves first; invalidation drops a table or a whole connection', async () => {
    const repo = store(100);
    const one = (await new VectorCache(store(100)).get('db_0', 'x', 'fake', 'v')).bytes;
    const cache = new VectorCache(repo, Math.floor(one * 2.5));
    await cache.get('db_1', 'a', 'fake', 'v');
    await cache.get('db_1', 'b', 'fake', 'v');
    await cache.get('db_1', 'a', 'fake', 'v'); // a is now the most recently used
    await cache.get('db_2', 'c', 'fake', 'v'); // over budget: b leaves
    expect(cache.stats()).toEqual({ tables: 2, bytes: 2 * one });
    repo.countFor.mockClear();
    await cache.get('db_1', 'a', 'fake', 'v');
    expect(repo.countFor).not.toHaveBeenCalled();
    cache.invalidate('db_2', 'c');
    expect(cache.stats()).toEqual({ tables: 1, bytes: one });
    await cache.get('db_1', 'b', 'fake', 'v'); // b had left: read again
    expect(repo.countFor).toHaveBeenCalledTimes(1);
    cache.invalidate('db_1');
    expect(cache.stats()).toEqual({ tables: 0, bytes: 0 });
  });
});
