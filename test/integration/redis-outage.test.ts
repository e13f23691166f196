/** When the configured Redis cannot be reached, Quarry keeps answering, says so in health, and never 500s or 429s for it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer({ REDIS_URL: 'redis://127.0.0.1:1' })));
afterAll(() => t.stop());

describe('Redis unreachable', () => {
  it('when Redis is down, then health is degraded (200) and key requests are still limited per process', async () => {
    const health = await t.client.get('/health');
    expect(health.status).toBe(200);
    expect(health.body.data.status).toBe('degraded');
    expect(health.body.data.checks.cache).toMatchObject({ status: 'down' });
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user);
    const answers = [];
    for (let i = 0; i < 51; i += 1) answers.push((await t.client.get('/api/v1/rate-limit/analytics', { token: key.secret })).status);
    expect(answers.slice(0, 50).every((s) => s === 200)).toBe(true);
    expect(answers[50]).toBe(429);
    t.assertContract();
  });
});
