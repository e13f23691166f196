import { describe, expect, it, vi } from 'vitest';
import { AcquireTimeoutError, PoolClosedError, ResourcePool } from '../../../src/connectors/resource-pool.js';

interface Handle {
  n: number;
}

function pool(max = 2, acquireTimeoutMs = 200) {
  let n = 0;
  const destroy = vi.fn(async (_handle: Handle) => undefined);
  const p = new ResourcePool<Handle>({ max, acquireTimeoutMs, create: async () => ({ n: ++n }), destroy });
  return { p, destroy };
}

describe('ResourcePool', () => {
  it('when resources are released, then they are reused instead of created', async () => {
    const { p } = pool();
    const a = await p.acquire();
    a.release();
    const b = await p.acquire();
    expect(b.resource).toBe(a.resource);
    expect(p.stats()).toEqual({ open: true, total: 1, idle: 0, waiting: 0, max: 2 });
  });

  it('when all resources are busy, then a caller waits and gets the next released one', async () => {
    const { p } = pool(1, 1000);
    const a = await p.acquire();
    const waiting = p.acquire();
    await vi.waitFor(() => expect(p.stats().waiting).toBe(1));
    a.release();
    expect((await waiting).resource).toBe(a.resource);
  });

  it('when nothing is released in time, then acquire fails with a timeout', async () => {
    const { p } = pool(1, 20);
    await p.acquire();
    await expect(p.acquire()).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(p.stats().waiting).toBe(0);
  });

  it('when a lease is released twice, then the second release is refused: the next holder keeps the resource', async () => {
    const { p } = pool(1, 50);
    const first = await p.acquire();
    first.release();
    const second = await p.acquire();
    expect(second.resource).toBe(first.resource);
    first.release(); // the first holder's stray second release
    expect(p.stats()).toMatchObject({ total: 1, idle: 0 });
    await expect(p.acquire()).rejects.toBeInstanceOf(AcquireTimeoutError);
    second.release();
    expect((await p.acquire()).resource).toBe(first.resource);
  });

  it('when a broken resource is released, then it is destroyed and a waiter gets a new one', async () => {
    const { p, destroy } = pool(1, 1000);
    const a = await p.acquire();
    const waiting = p.acquire();
    a.release(true);
    const next = await waiting;
    expect(destroy).toHaveBeenCalledWith(a.resource);
    expect(next.resource).not.toBe(a.resource);
  });

  it('when the pool is closed, then idle resources are destroyed and later acquires fail', async () => {
    const { p, destroy } = pool();
    const a = await p.acquire();
    a.release();
    await p.close();
    expect(destroy).toHaveBeenCalledWith(a.resource);
    await expect(p.acquire()).rejects.toBeInstanceOf(PoolClosedError);
    expect(p.stats()).toMatchObject({ open: false, total: 0 });
  });

  it('when the pool closes while a resource is leased, then it waits for it and destroys it', async () => {
    const { p, destroy } = pool();
    const a = await p.acquire();
    const closing = p.close();
    expect(destroy).not.toHaveBeenCalled();
    a.release();
    await closing;
    expect(destroy).toHaveBeenCalledWith(a.resource);
  });
});
