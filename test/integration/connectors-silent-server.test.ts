/**
 * A server that accepts TCP connections and never answers (a hung database, a black-holing proxy): every engine
 * must give up after the connect timeout with DATABASE_TIMEOUT instead of hanging the request.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/connectors/connection-test.js';
import type { ConnectionSettings } from '../../src/connectors/types.js';
import { LOOPBACK_POLICY } from './connectors-support.js';

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
