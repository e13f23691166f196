/**
 * Fault: Quarry's own store (PostgreSQL) stops and comes back. Runs a private PostgreSQL cluster (never the
 * shared one): health is 503 while it is down, requests that need it fail cleanly, the process stays up, it
 * recovers without a restart, and usage records acknowledged before or during the outage are not lost.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser } from '../support/factories.js';
import { onPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../support/fault-instances.js';

let postgres: PrivatePostgres | undefined;
let server: ServerProcess | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await onPrivatePostgres(postgres.url, ['CREATE DATABASE quarry']);
  server = await spawnServer({
    DATABASE_URL: postgres.urlFor('quarry'),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-fault-store-')),
    TRUST_PROXY: 'true',
    USAGE_FLUSH_MS: '200',
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await postgres?.cleanup();
});

describe('PostgreSQL as Quarry\'s own store stops', () => {
  it('when the store stops and restarts, then health is 503, store requests fail cleanly, the service recovers and acknowledged usage is kept', async () => {
    const client = new ApiClient(server!.url);
    const user = await registerUser(client);
    const key = await createKey(client, user, { rateLimitTier: 'pro', permissions: ['search', 'analytics'] });

    // Acknowledged before the outage: some flushed, the last ones possibly still in the batch writer.
    let acknowledged = 0;
    for (let i = 0; i < 5; i += 1) {
      expect((await client.get('/api/v1/rate-limit/status', { token: key.secret })).status).toBe(200);
      acknowledged += 1;
    }
    await sleep(500); // flushed
    for (let i = 0; i < 3; i += 1) {
      expect((await client.get('/health', { token: key.secret })).status).toBe(200);
    }
    const before = await client.get(`/api/v1/keys/${key.id}/usage`, { token: user.token });
    expect(before.status).toBe(200);
    const totalBefore: number = before.body.data.usage.totalRequests;
    expect(totalBefore).toBe(acknowledged + 3);

    // Key requests answered just before the stop: recorded in memory, written after the store returns.
    const lastMinute: number[] = [];
    for (let i = 0; i < 4; i += 1) lastMinute.push((await client.get('/health', { token: key.secret })).status);
    expect(lastMinute.every((s) => s === 200)).toBe(true);
    await postgres!.stop();

    // Down: health is 503 with the error envelope; a request that needs the store is a clean 5xx.
    let health = await client.get('/health');
    for (let i = 0; i < 20 && health.status !== 503; i += 1) {
      await sleep(250);
      health = await client.get('/health');
    }
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(health.body.error.details.checks.store.status).toBe('down');

    const usageDown = await client.get(`/api/v1/keys/${key.id}/usage`, { token: user.token });
    expect(usageDown.status).toBeGreaterThanOrEqual(500);
    expect(usageDown.body).toMatchObject({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
    expect(JSON.stringify(usageDown.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack|at .*\.ts/);
    const login = await client.post('/api/v1/auth/login', { email: user.email, password: user.password }, { headers: { 'X-Forwarded-For': '10.9.9.9' } });
    expect(login.status).toBeGreaterThanOrEqual(500);
    expect(login.body.success).toBe(false);

    // Key requests while the store is down: every answer is an envelope; the 2xx ones are acknowledged.
    const during: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const answer = await client.get('/health', { token: key.secret });
      expect(answer.body.success === true || typeof answer.body.error?.code === 'string').toBe(true);
      during.push(answer.status);
    }
    await sleep(600); // at least two failed flushes
    expect(server!.child.exitCode).toBeNull();

    await postgres!.start();
    let recovered = await client.get('/health');
    for (let i = 0; i < 40 && recovered.status !== 200; i += 1) {
      await sleep(250);
      recovered = await client.get('/health');
    }
    expect(recovered.status).toBe(200);
    expect(recovered.body.data.status).toBe('healthy');

    // Every request answered before the stop is in the usage, including the ones written only after recovery.
    let after = await client.get(`/api/v1/keys/${key.id}/usage`, { token: user.token });
    for (let i = 0; i < 20 && after.status !== 200; i += 1) {
      await sleep(250);
      after = await client.get(`/api/v1/keys/${key.id}/usage`, { token: user.token });
    }
    expect(after.status).toBe(200);
    // Exactly every key request so far: 8 flushed before, 4 answered just before the stop, and the 6 answered (503)
    // during the outage, whose records went through failed flushes and were kept until the store returned.
    expect(during).toEqual([503, 503, 503, 503, 503, 503]);
    expect(after.body.data.usage).toMatchObject({
      totalRequests: totalBefore + lastMinute.length + during.length,
      successfulRequests: totalBefore + lastMinute.length,
      failedRequests: during.length,
    });
    expect(server!.output()).toMatch(/ECONNREFUSED/); // the failed writes were reported, not swallowed
    expect(server!.child.exitCode).toBeNull();
    // The process logged the failed writes and kept running.
    expect((await client.get('/api/v1/rate-limit/status', { token: key.secret })).status).toBe(200);
  }, 120_000);
});
