/**
 * A bounded pool for drivers that have none (sqlite3), on tarn: at most `max` resources, created on demand, callers
 * queue when all are busy and give up after `acquireTimeoutMs`, idle ones are closed after a while. Each acquire
 * hands out a lease that gives its resource back once: releasing it again does nothing, so a second release can
 * never hand back a resource that another caller holds by then.
 */
import { Pool, TimeoutError } from 'tarn';
import type { PoolStats } from './types.js';

export interface ResourcePoolOptions<T> {
  max: number;
  acquireTimeoutMs: number;
  /** How long an unused resource stays open. */
  idleTimeoutMs?: number;
  create(): Promise<T>;
  destroy(resource: T): Promise<void>;
}

export interface Lease<T> {
  readonly resource: T;
  /** Gives the resource back; a broken one is destroyed rather than reused. Only the first call counts. */
  release(broken?: boolean): void;
}

export class PoolClosedError extends Error {}
export class AcquireTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export class ResourcePool<T extends object> {
  private readonly pool: Pool<T>;
  /** Resources given back broken: tarn's validate refuses them, so they are destroyed instead of handed out again. */
  private readonly broken = new WeakSet<T>();
  private closed = false;

  constructor(private readonly options: ResourcePoolOptions<T>) {
    this.pool = new Pool<T>({
      min: 0,
      max: options.max,
      acquireTimeoutMillis: options.acquireTimeoutMs,
      createTimeoutMillis: options.acquireTimeoutMs,
      idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
      // A resource that cannot be opened (a missing file) fails the caller at once instead of being retried.
      propagateCreateError: true,
      create: () => options.create(),
      destroy: (resource) => options.destroy(resource).catch(() => undefined),
      validate: (resource) => !this.broken.has(resource),
    });
  }

  async acquire(): Promise<Lease<T>> {
    if (this.closed) throw new PoolClosedError('pool closed');
    let resource: T;
    try {
      resource = await this.pool.acquire().promise;
    } catch (error) {
      if (this.closed) throw new PoolClosedError('pool closed');
      if (error instanceof TimeoutError) throw new AcquireTimeoutError('timed out waiting for a free connection');
      throw error;
    }
    let released = false;
    return {
      resource,
      release: (broken = false) => {
        if (released) return;
        released = true;
        if (broken) this.broken.add(resource);
        this.pool.release(resource);
      },
    };
  }

  stats(): PoolStats {
    return {
      open: !this.closed,
      total: this.pool.numUsed() + this.pool.numFree() + this.pool.numPendingCreates(),
      idle: this.pool.numFree(),
      waiting: this.pool.numPendingAcquires(),
      max: this.options.max,
    };
  }

  /** Refuses new acquires, waits for leased resources to come back, then destroys every resource. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }
}
