import { describe, expect, it, vi } from 'vitest';
import { AcquireTimeoutError, PoolClosedError, ResourcePool } from '../../../src/connectors/resource-pool.js';

function pool(max = 2, acquireTimeoutMs = 50) {
  let n = 0;
  const destroy = vi.fn(async () => undefined);
  const p = new ResourcePool<number>({ max, acquireTimeoutMs, create: async () => ++n, destroy });
  return { p, destroy };
}

describe('ResourcePool', () => {
  it('when resources are released, then they are reused instead of created', async () => {
    const { p } = pool();
    const a = await p.acquire();
    p.release(a);
    expect(await p.acquire()).toBe(a);
    expect(p.stats()).toEqual({ open: true, total: 1, idle: 0, waiting: 0, max: 2 });
  });

  it('when all resources are busy, then a caller waits and gets the next released one', async () => {
    const { p } = pool(1, 1000);
    const a = await p.acquire();
    const waiting = p.acquire();
    expect(p.stats().waiting).toBe(1);
    p.release(a);
    expect(await waiting).toBe(a);
  });

  it('when nothing is released in time, then acquire fails with a timeout', async () => {
    const { p } = pool(1, 20);
    await p.acquire();
    await expect(p.acquire()).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(p.stats().waiting).toBe(0);
  });

  it('when a broken resource is released, then it is destroyed and a waiter gets a new one', async () => {
    const { p, destroy } = pool(1, 1000);
    const a = await p.acquire();
    const waiting = p.acquire();
    p.release(a, true);
    expect(destroy).toHaveBeenCalledWith(a);
    expect(await waiting).not.toBe(a);
  });

  it('when the pool is closed, then idle resources are destroyed and later acquires fail', async () => {
    const { p, destroy } = pool();
    const a = await p.acquire();
    p.release(a);
    await p.close();
    expect(destroy).toHaveBeenCalledWith(a);
    await expect(p.acquire()).rejects.toBeInstanceOf(PoolClosedError);
    expect(p.stats()).toMatchObject({ open: false, total: 0 });
  });
});
