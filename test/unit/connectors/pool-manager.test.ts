import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectorError } from '../../../src/connectors/errors.js';
import { PoolManager } from '../../../src/connectors/pool-manager.js';
import type { ConnectionSettings, PooledExecutor } from '../../../src/connectors/types.js';

function settings(overrides: Partial<ConnectionSettings> = {}): ConnectionSettings {
  return {
    engine: 'postgres', host: 'db.example.com', port: 5432, database: 'app', username: 'u', password: 'p',
    ssl: false, tables: null, ...overrides,
  };
}

function fakeExecutor(): PooledExecutor & { closed: boolean } {
  const executor = {
    engine: 'postgres' as const,
    closed: false,
    quoteIdent: (n: string) => `"${n}"`,
    placeholder: (n: number) => `$${n}`,
    query: vi.fn(async () => [{ ok: 1 }]),
    stats: () => ({ open: !executor.closed, total: 1, idle: 1, waiting: 0, max: 5 }),
    close: vi.fn(async () => {
      executor.closed = true;
    }),
  };
  return executor as unknown as PooledExecutor & { closed: boolean };
}

const policy = { allowlist: [], allowPrivate: false, allowLoopback: false };
let manager: PoolManager | undefined;

afterEach(async () => {
  await manager?.closeAll();
  manager = undefined;
});

function managerWith(create: () => Promise<PooledExecutor>, idleCloseMs?: number) {
  const factory = vi.fn(create);
  manager = new PoolManager({ hostPolicy: policy, createExecutor: factory, ...(idleCloseMs ? { idleCloseMs } : {}) });
  return { manager, factory };
}

describe('PoolManager', () => {
  it('when the same id is asked for twice, even concurrently, then one pool is opened and the same executor returned', async () => {
    const { manager, factory } = managerWith(async () => fakeExecutor());
    const [a, b] = await Promise.all([manager.get('db1', settings()), manager.get('db1', settings())]);
    const c = await manager.get('db1', settings());
    expect(a).toBe(b);
    expect(a).toBe(c);
    expect(factory).toHaveBeenCalledTimes(1);
  });

  it('when two ids are asked for, then each gets its own pool', async () => {
    const { manager, factory } = managerWith(async () => fakeExecutor());
    expect(await manager.get('db1', settings())).not.toBe(await manager.get('db2', settings()));
    expect(factory).toHaveBeenCalledTimes(2);
  });

  it('when a query runs, then it goes to the pooled executor and stats report the pool', async () => {
    const inner = fakeExecutor();
    const { manager } = managerWith(async () => inner);
    expect(manager.stats('db1')).toBeNull();
    const executor = await manager.get('db1', settings());
    await expect(executor.query('SELECT 1', [], { timeoutMs: 100 })).resolves.toEqual([{ ok: 1 }]);
    expect(inner.query).toHaveBeenCalledWith('SELECT 1', [], { timeoutMs: 100 });
    expect(manager.stats('db1')).toEqual({ open: true, total: 1, idle: 1, waiting: 0, max: 5 });
    expect(executor.quoteIdent('a"b')).toBe('"a""b"');
    expect(executor.placeholder(2)).toBe('$2');
  });

  it('when close(id) is called, then the pool is closed, stats are null and the next get opens a new one', async () => {
    const first = fakeExecutor();
    const { manager, factory } = managerWith(async () => (factory.mock.calls.length === 1 ? first : fakeExecutor()));
    const a = await manager.get('db1', settings());
    await manager.close('db1');
    expect(first.close).toHaveBeenCalledTimes(1);
    expect(manager.stats('db1')).toBeNull();
    expect(manager.has('db1')).toBe(false);
    const b = await manager.get('db1', settings());
    expect(b).not.toBe(a);
  });

  it('when settings change under the same id, then the old pool is replaced', async () => {
    const first = fakeExecutor();
    const { manager, factory } = managerWith(async () => (factory.mock.calls.length === 1 ? first : fakeExecutor()));
    await manager.get('db1', settings());
    await manager.get('db1', settings({ password: 'rotated' }));
    expect(first.close).toHaveBeenCalled();
    expect(factory).toHaveBeenCalledTimes(2);
  });

  it('when opening fails, then the error is raised and the next get tries again', async () => {
    let attempt = 0;
    const { manager } = managerWith(async () => {
      attempt++;
      if (attempt === 1) throw new ConnectorError('HOST_NOT_ALLOWED', 'refused');
      return fakeExecutor();
    });
    await expect(manager.get('db1', settings())).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    expect(manager.has('db1')).toBe(false);
    await expect(manager.get('db1', settings())).resolves.toBeTruthy();
  });

  it('when a pool has been idle longer than idleCloseMs, then it is closed; a busy one is kept', async () => {
    const idle = fakeExecutor();
    const busy = fakeExecutor();
    let release: () => void = () => undefined;
    (busy.query as ReturnType<typeof vi.fn>).mockImplementation(() => new Promise((resolve) => (release = () => resolve([]))));
    const { manager } = managerWith(async () => (manager.has('idle') && !manager.has('busy') ? busy : idle), 1000);
    await manager.get('idle', settings());
    const busyExecutor = await manager.get('busy', settings({ database: 'other' }));
    const running = busyExecutor.query('SELECT 1', [], { timeoutMs: 100 });
    await manager.closeIdle(Date.now() + 5000);
    expect(idle.close).toHaveBeenCalled();
    expect(manager.has('idle')).toBe(false);
    expect(manager.has('busy')).toBe(true);
    release();
    await running;
  });

  it('when closeAll is called, then every pool is closed', async () => {
    const executors: Array<ReturnType<typeof fakeExecutor>> = [];
    const { manager } = managerWith(async () => {
      const e = fakeExecutor();
      executors.push(e);
      return e;
    });
    await manager.get('a', settings());
    await manager.get('b', settings());
    await manager.closeAll();
    expect(executors.every((e) => e.closed)).toBe(true);
  });
});
