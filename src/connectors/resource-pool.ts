/**
 * A minimal bounded pool for drivers that have none (sqlite3): at most `max` resources, created on demand,
 * callers queue when all are busy and give up after `acquireTimeoutMs`.
 */
import type { PoolStats } from './types.js';

export interface ResourcePoolOptions<T> {
  max: number;
  acquireTimeoutMs: number;
  create(): Promise<T>;
  destroy(resource: T): Promise<void>;
}

interface Waiter<T> {
  resolve(resource: T): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export class PoolClosedError extends Error {}
export class AcquireTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export class ResourcePool<T> {
  private readonly idle: T[] = [];
  private readonly waiters: Array<Waiter<T>> = [];
  private total = 0;
  private closed = false;

  constructor(private readonly options: ResourcePoolOptions<T>) {}

  async acquire(): Promise<T> {
    if (this.closed) throw new PoolClosedError('pool closed');
    const ready = this.idle.pop();
    if (ready !== undefined) return ready;
    if (this.total < this.options.max) return this.createOne();
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(new AcquireTimeoutError('timed out waiting for a free connection'));
        }, this.options.acquireTimeoutMs),
      };
      waiter.timer.unref();
      this.waiters.push(waiter);
    });
  }

  /** Gives a resource back; a broken one is destroyed and its slot freed. */
  release(resource: T, broken = false): void {
    if (broken || this.closed) {
      this.total--;
      void this.options.destroy(resource).catch(() => undefined);
      this.serveNextWaiter();
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(resource);
    } else {
      this.idle.push(resource);
    }
  }

  stats(): PoolStats {
    return {
      open: !this.closed,
      total: this.total,
      idle: this.idle.length,
      waiting: this.waiters.length,
      max: this.options.max,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new PoolClosedError('pool closed'));
    }
    const idle = this.idle.splice(0);
    this.total -= idle.length;
    await Promise.all(idle.map((r) => this.options.destroy(r).catch(() => undefined)));
  }

  private async createOne(): Promise<T> {
    this.total++;
    try {
      return await this.options.create();
    } catch (err) {
      this.total--;
      this.serveNextWaiter();
      throw err;
    }
  }

  /** A slot was freed: let the longest waiter open a resource of its own. */
  private serveNextWaiter(): void {
    if (this.closed || this.total >= this.options.max) return;
    const waiter = this.waiters.shift();
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.createOne().then(waiter.resolve, waiter.reject);
  }
}
