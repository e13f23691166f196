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
    query: vi.fn(async () => {
      if (executor.closed) throw new Error('pool closed');
      return [{ ok: 1 }];
    }),
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
    // The refusal is not remembered: the next search opens the pool.
    await expect(manager.get('db1', settings())).resolves.toMatchObject({ engine: 'postgres' });
    expect(manager.has('db1')).toBe(true);
  });

  it('when a pool has been idle longer than idleCloseMs, then it is closed; a busy one is kept', async () => {
    const idle = fakeExecutor();
    const busy = fakeExecutor();
    let release: () => void = () => undefined;
    (busy.query as ReturnType<typeof vi.fn>).mockImplementation(() => new Promise((resolve) => (release = () => resolve([]))));
    const factory = vi.fn(async (opened: ConnectionSettings) => (opened.database === 'other' ? busy : idle));
    manager = new PoolManager({ hostPolicy: policy, createExecutor: factory, idleCloseMs: 1000 });
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

  describe('bounds per database server and in all', () => {
    const bounded = (options: { maxPerHost?: number; maxTotal?: number; max?: number; connectTimeoutMs?: number }) => {
      const executors: Array<ReturnType<typeof fakeExecutor>> = [];
      manager = new PoolManager({ hostPolicy: policy, max: 5, connectTimeoutMs: 300, ...options, createExecutor: async () => {
        const e = fakeExecutor();
        executors.push(e);
        return e;
      } });
      return { manager, executors };
    };
    const on = (host: string, database: string) => settings({ host, database });

    it('when more pools of one server are needed than its bound, then the least recently used idle ones are closed first and the bound is never passed', async () => {
      const { manager, executors } = bounded({ maxPerHost: 10 });
      const a = await manager.get('a', on('db1', 'a'));
      await manager.get('b', on('db1', 'b'));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await a.query('SELECT 1', [], { timeoutMs: 100 }); // a is now used more recently than b
      await manager.get('c', on('db1', 'c'));
      expect(manager.held()).toEqual({ total: 10, byHost: { 'db1:5432': 10 } });
      expect(manager.has('b')).toBe(false);
      expect(manager.has('a')).toBe(true);
      expect(executors[1]!.closed).toBe(true);
      await manager.get('d', on('db2', 'd')); // another server has its own bound
      expect(manager.held().byHost).toEqual({ 'db1:5432': 10, 'db2:5432': 5 });
    });

    it('when every pool of the server is busy, then a new one waits for one to go idle, and fails with DATABASE_TIMEOUT if none does in time', async () => {
      const { manager, executors } = bounded({ maxPerHost: 5 });
      const a = await manager.get('a', on('db1', 'a'));
      let finish: () => void = () => undefined;
      (executors[0]!.query as ReturnType<typeof vi.fn>).mockImplementation(() => new Promise((resolve) => (finish = () => resolve([]))));
      const running = a.query('SELECT pg_sleep(1)', [], { timeoutMs: 1000 });
      await expect(manager.get('b', on('db1', 'b'))).rejects.toMatchObject({ code: 'DATABASE_TIMEOUT', details: { reason: 'host_connections' } });
      const waiting = manager.get('c', on('db1', 'c'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(manager.has('a')).toBe(true);
      finish();
      await running;
      const c = await waiting;
      expect(manager.has('a')).toBe(false);
      expect(executors[0]!.closed).toBe(true);
      expect(manager.held().byHost).toEqual({ 'db1:5432': 5 });
      // The executor handed out after the wait is c's own pool, opened in the room a left.
      expect(manager.has('c')).toBe(true);
      await expect(c.query('SELECT 1', [], { timeoutMs: 100 })).resolves.toEqual([{ ok: 1 }]);
      expect(executors.at(-1)!.query).toHaveBeenCalledWith('SELECT 1', [], { timeoutMs: 100 });
      expect(executors.at(-1)).not.toBe(executors[0]);
    });

    it('when the total bound is reached, then idle pools of any server make room', async () => {
      const { manager } = bounded({ maxPerHost: 20, maxTotal: 10 });
      await manager.get('a', on('db1', 'a'));
      await manager.get('b', on('db2', 'b'));
      await manager.get('c', on('db3', 'c'));
      expect(manager.held().total).toBe(10);
      expect(manager.has('a')).toBe(false);
    });

    it('when an executor handed out was closed to make room, then its next query opens the pool again; one closed because its connection changed stays closed', async () => {
      const { manager, executors } = bounded({ maxPerHost: 5 });
      const a = await manager.get('a', on('db1', 'a'));
      await manager.get('b', on('db1', 'b'));
      expect(manager.has('a')).toBe(false);
      await expect(a.query('SELECT 1', [], { timeoutMs: 100 })).resolves.toEqual([{ ok: 1 }]);
      expect(manager.has('a')).toBe(true);
      expect(executors).toHaveLength(3);
      await manager.close('a'); // updated or deleted
      await expect(a.query('SELECT 1', [], { timeoutMs: 100 })).rejects.toThrow('pool closed');
      expect(manager.has('a')).toBe(false);
    });

    it('when the connections are SQLite files, then no server bound applies, only the total', async () => {
      const { manager } = bounded({ maxPerHost: 5, maxTotal: 100 });
      for (const name of ['a', 'b', 'c']) await manager.get(name, settings({ engine: 'sqlite', host: null, port: null, database: `/data/${name}.db` }));
      expect(manager.held()).toEqual({ total: 15, byHost: {} });
    });
  });
});
