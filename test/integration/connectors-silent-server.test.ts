/**
 * A server that accepts TCP connections and never answers (a hung database, a black-holing proxy): every engine
 * must give up after the connect timeout with DATABASE_TIMEOUT instead of hanging the request.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/connectors/connection-test.js';
import type { ConnectionSettings } from '../../src/connectors/types.js';
import { CLOSE_GRACE_MS } from '../../src/connectors/deadline.js';
import { createExecutor } from '../../src/connectors/executor.js';
import { startHangingProxy } from '../support/fault-instances.js';
import { LOOPBACK_POLICY, settingsFromUrl } from './connectors-support.js';

describe('connectors against a server that never answers', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['postgres', 'mysql'] as const)('when %s connects, then DATABASE_TIMEOUT after the connect timeout', async (engine) => {
    const settings: ConnectionSettings = {
      engine, host: '127.0.0.1', port, database: 'x', username: 'u', password: 'p', ssl: false, tables: null,
    };
    const start = Date.now();
    const result = await testConnection(settings, { hostPolicy: LOOPBACK_POLICY, connectTimeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: { code: 'DATABASE_TIMEOUT', message: 'The database did not answer within 300 ms.' } });
    expect(Date.now() - start).toBeLessThan(1500);
  });
});

describe('closing a pool whose server stopped answering mid-query', () => {
  const urls = { postgres: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test', mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test' };

  it.each(['mysql', 'postgres'] as const)('when a %s pool is closed while a query waits on a hung server, then close returns within CLOSE_GRACE_MS', async (engine) => {
    const upstream = settingsFromUrl(engine, urls[engine]);
    const proxy = await startHangingProxy(upstream.port!);
    try {
      const executor = await createExecutor({ ...upstream, host: '127.0.0.1', port: proxy.port }, { hostPolicy: LOOPBACK_POLICY, connectTimeoutMs: 2000 });
      await Promise.all([1, 2, 3].map(() => executor.query('SELECT 1 AS one', [], { timeoutMs: 2000 })));
      proxy.hang();
      const waiting = executor.query('SELECT 1 AS one', [], { timeoutMs: 30_000 }).catch((error: { code?: string }) => error.code);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      const closed = await Promise.race([executor.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still closing'), 10_000))]);
      const took = Date.now() - started;
      console.info(`${engine}: a pool with a query waiting on a hung server closed in ${took} ms (${closed})`);
      expect(closed).toBe('closed');
      expect(took).toBeLessThan(CLOSE_GRACE_MS + 1000);
      expect(await waiting).toMatch(/^DATABASE_/);
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
