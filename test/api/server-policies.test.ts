/** Settings that change the server's trust decisions; each case starts its own server, one at a time. */
import { describe, expect, it } from 'vitest';
import { registerUser } from '../support/factories.js';
import { postgresConnection } from '../support/seed-databases.js';
import { startTestServer } from '../support/test-server.js';

describe('client IP', () => {
  it('when TRUST_PROXY is off, then X-Forwarded-For is ignored and per-IP limits cannot be dodged', async () => {
    const strict = await startTestServer({ TRUST_PROXY: 'false' });
    try {
      const statuses = [];
      for (let i = 0; i < 11; i += 1) {
        const res = await strict.client.post('/api/v1/auth/login', { email: 'x@example.com', password: 'whatever-123' }, { headers: { 'X-Forwarded-For': `10.0.0.${i}` } });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
      expect(statuses[10]).toBe(429);
      strict.assertContract();
    } finally {
      await strict.stop();
    }
  });
});

describe('database host policy', () => {
  it('when private hosts are not allowed, then loopback is refused before any connection', async () => {
    const strict = await startTestServer({ DB_ALLOW_PRIVATE_HOSTS: 'false' });
    try {
      const user = await registerUser(strict.client);
      const res = await strict.client.post('/api/v1/databases', postgresConnection(), { token: user.token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('HOST_NOT_ALLOWED');
      strict.assertContract();
    } finally {
      await strict.stop();
    }
  });

  it('when the host is on DB_HOST_ALLOWLIST, then it is allowed even with private hosts refused', async () => {
    const allowed = await startTestServer({ DB_ALLOW_PRIVATE_HOSTS: 'false', DB_HOST_ALLOWLIST: '127.0.0.1' });
    try {
      const user = await registerUser(allowed.client);
      expect((await allowed.client.post('/api/v1/databases', postgresConnection(), { token: user.token })).status).toBe(201);
      allowed.assertContract();
    } finally {
      await allowed.stop();
    }
  });
});
