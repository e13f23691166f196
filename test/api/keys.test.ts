import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestUser } from '../support/factories.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

/** An operation that needs a key with permission `analytics` and is already built. */
const keyProbe = (secret: string) => t.client.get('/api/v1/rate-limit/status', { token: secret });
const healthAs = (secret: string) => t.client.get('/health', { token: secret });

describe('setupInitialKey', () => {
  it('when called first, then a test/free key with search+analytics; when called again, then 409', async () => {
    const user = await registerUser(t.client);
    const first = await t.client.post('/api/v1/management/setup', { name: 'Starter' }, { token: user.token });
    expect(first.status).toBe(201);
    expect(first.body.data.apiKey).toMatchObject({ name: 'Starter', environment: 'test', permissions: ['search', 'analytics'], rateLimitTier: 'free', isActive: true, expiresAt: null });
    expect(first.body.data.secretKey).toMatch(/^quarry_sk_test_[A-Za-z0-9]{52}$/);
    expect(first.body.data.secretKey.startsWith(first.body.data.apiKey.keyPrefix)).toBe(true);
    expect(first.body.data.warning).toMatch(/only once/);
    const second = await t.client.post('/api/v1/management/setup', undefined, { token: user.token });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('SETUP_ALREADY_COMPLETED');
    expect(second.body.error.message).toContain('POST /api/v1/keys');
  });

  it('when two setups race, then exactly one key is created', async () => {
    const user = await registerUser(t.client);
    const results = await Promise.all([1, 2, 3].map(() => t.client.post('/api/v1/management/setup', undefined, { token: user.token })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect((await t.client.get('/api/v1/keys', { token: user.token })).body.data.total).toBe(1);
  });

  it('when the caller sends an API key instead of a JWT, then 401 INVALID_TOKEN', async () => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user);
    expect((await t.client.post('/api/v1/management/setup', undefined, { token: key.secret })).body.error.code).toBe('INVALID_TOKEN');
  });
});

describe('createApiKey / listApiKeys', () => {
  it('when created, then the secret is shown once, only its hash is kept, and the listing never shows it', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'pro');
    const created = await t.client.post('/api/v1/keys', { name: 'Live search', environment: 'live', permissions: ['search'], rateLimitTier: 'pro', expiresAt: '2999-12-31' }, { token: user.token });
    expect(created.status).toBe(201);
    expect(created.body.data.apiKey).toMatchObject({ environment: 'live', rateLimitTier: 'pro', expiresAt: '2999-12-31T23:59:59.999Z' });
    const secret: string = created.body.data.secretKey;
    expect(created.body.data.apiKey.keyPrefix).toBe(secret.slice(0, 'quarry_sk_live_'.length + 8));
    const list = await t.client.get('/api/v1/keys', { token: user.token });
    expect(list.body.data.total).toBe(1);
    expect(list.body.data.apiKeys[0]).toMatchObject({ id: created.body.data.apiKey.id, isActive: true, usageCount: 0, lastUsed: null });
    expect(JSON.stringify(list.body)).not.toContain(secret.slice(-44));
  });

  it.each([
    [{ name: 'x', permissions: ['database:read'] }, '/permissions/0'],
    [{ name: 'x', expiresAt: '2001-01-01' }, '/expiresAt'],
    [{ name: 'x', expiresAt: 'tomorrow' }, '/expiresAt'],
    [{ name: 'x', rateLimitTier: 'platinum' }, '/rateLimitTier'],
    [{ name: 'x', environment: 'staging' }, '/environment'],
  ])('when the body is %j, then 400 naming %s', async (body, path) => {
    const user = await registerUser(t.client);
    const res = await t.client.post('/api/v1/keys', body, { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors.map((e: { path: string }) => e.path)).toContain(path);
  });
});

describe('key authentication', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await registerUser(t.client);
    await grantPlan(t, user, 'pro');
  });

  it('when the key is valid, then the key operation answers and health names tier and permissions', async () => {
    const key = await createKey(t.client, user, { permissions: ['search'], rateLimitTier: 'pro' });
    const health = await healthAs(key.secret);
    expect(health.body.data).toMatchObject({ authenticated: true, keyInfo: { tier: 'pro', permissions: ['search'] } });
  });

  it.each([
    ['missing', undefined, 'AUTH_REQUIRED'],
    ['malformed', 'quarry_sk_test_short', 'MALFORMED_API_KEY'],
    ['unknown', `quarry_sk_test_${'A'.repeat(52)}`, 'INVALID_API_KEY'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.e30.sig', 'INVALID_API_KEY'],
  ])('when the key is %s, then 401 %s', async (_label, token, code) => {
    const res = await t.client.get('/api/v1/rate-limit/status', token ? { token } : {});
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe(code);
  });

  it('when the environment segment of a real key is changed, then 401 INVALID_API_KEY', async () => {
    const key = await createKey(t.client, user, { environment: 'test' });
    const res = await keyProbe(key.secret.replace('_test_', '_live_'));
    expect(res.body.error.code).toBe('INVALID_API_KEY');
  });

  it('when the secret part is altered by one character, then 401 INVALID_API_KEY', async () => {
    const key = await createKey(t.client, user);
    const last = key.secret.at(-1) === 'a' ? 'b' : 'a';
    expect((await keyProbe(key.secret.slice(0, -1) + last)).body.error.code).toBe('INVALID_API_KEY');
  });

  it('when the key was just verified (cached) and its secret part is then altered, then still 401 INVALID_API_KEY', async () => {
    const key = await createKey(t.client, user);
    expect((await keyProbe(key.secret)).status).toBe(200);
    const last = key.secret.at(-1) === 'a' ? 'b' : 'a';
    expect((await keyProbe(key.secret.slice(0, -1) + last)).body.error.code).toBe('INVALID_API_KEY');
    expect((await keyProbe(key.secret.slice(0, -2))).body.error.code).toBe('MALFORMED_API_KEY');
    expect((await keyProbe(key.secret)).status).toBe(200);
  });

  it('when the key lacks the permission, then 403 INSUFFICIENT_PERMISSIONS; admin implies it', async () => {
    const searchOnly = await createKey(t.client, user, { permissions: ['search'] });
    const denied = await t.client.get('/api/v1/rate-limit/analytics', { token: searchOnly.secret });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', details: { required: 'analytics', granted: ['search'] } });
    const admin = await createKey(t.client, user, { permissions: ['admin'] });
    expect((await t.client.get('/api/v1/rate-limit/analytics', { token: admin.secret })).status).not.toBe(403);
  });

  it('when a JWT is sent to a key operation, then 401 INVALID_API_KEY', async () => {
    expect((await keyProbe(user.token)).body.error.code).toBe('INVALID_API_KEY');
  });
});

describe('key state transitions', () => {
  it('when revoked, then 401 KEY_REVOKED at once, isActive false, and revoking again keeps the first revokedAt', async () => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user);
    expect((await keyProbe(key.secret)).status).toBe(200);
    const revoked = await t.client.delete(`/api/v1/keys/${key.id}`, { token: user.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ keyId: key.id, revokedAt: expect.any(String) });
    const probe = await keyProbe(key.secret);
    expect(probe.status).toBe(401);
    expect(probe.body.error.code).toBe('KEY_REVOKED');
    const again = await t.client.delete(`/api/v1/keys/${key.id}`, { token: user.token });
    expect(again.body.data.revokedAt).toBe(revoked.body.data.revokedAt);
    const listed = (await t.client.get('/api/v1/keys', { token: user.token })).body.data.apiKeys[0];
    expect(listed).toMatchObject({ isActive: false, revokedAt: revoked.body.data.revokedAt });
    expect((await t.client.put(`/api/v1/keys/${key.id}`, { name: 'back' }, { token: user.token })).status).toBe(409);
    expect((await t.client.post(`/api/v1/keys/${key.id}/regenerate`, undefined, { token: user.token })).status).toBe(409);
  });

  it('when regenerated, then a new id and secret work, the old secret is 401 KEY_REVOKED immediately, settings carry over', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'pro');
    const key = await createKey(t.client, user, { permissions: ['search', 'analytics'], rateLimitTier: 'pro', environment: 'live' });
    const res = await t.client.post(`/api/v1/keys/${key.id}/regenerate`, undefined, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.oldKeyId).toBe(key.id);
    expect(res.body.data.apiKey.id).not.toBe(key.id);
    expect(res.body.data.apiKey).toMatchObject({ environment: 'live', rateLimitTier: 'pro', permissions: ['search', 'analytics'], isActive: true });
    expect((await keyProbe(key.secret)).body.error.code).toBe('KEY_REVOKED');
    expect((await keyProbe(res.body.data.secretKey)).status).toBe(200);
  });

  it('when updated, then name, tier, permissions and expiry change and the key keeps working', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'enterprise');
    const key = await createKey(t.client, user, { permissions: ['search'] });
    const res = await t.client.put(`/api/v1/keys/${key.id}`, { name: 'Renamed', rateLimitTier: 'enterprise', permissions: ['analytics'], expiresAt: '2999-01-01' }, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.apiKey).toMatchObject({ name: 'Renamed', rateLimitTier: 'enterprise', permissions: ['analytics'], expiresAt: '2999-01-01T23:59:59.999Z' });
    expect((await healthAs(key.secret)).body.data.keyInfo).toEqual({ tier: 'enterprise', permissions: ['analytics'] });
    const cleared = await t.client.put(`/api/v1/keys/${key.id}`, { expiresAt: null }, { token: user.token });
    expect(cleared.body.data.apiKey.expiresAt).toBeNull();
  });

  it('when the expiry has passed, then 401 KEY_EXPIRED', async () => {
    const user = await registerUser(t.client);
    const soon = new Date(Date.now() + 1500).toISOString();
    const key = await createKey(t.client, user, { expiresAt: soon });
    expect((await keyProbe(key.secret)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const res = await keyProbe(key.secret);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('KEY_EXPIRED');
  });
});

describe('tenant isolation', () => {
  it("when a user names another user's key in any key operation, then the same 404 as an unknown id, and nothing changes", async () => {
    const owner = await registerUser(t.client);
    const intruder = await registerUser(t.client);
    const key = await createKey(t.client, owner);
    const attempts = [
      t.client.put(`/api/v1/keys/${key.id}`, { name: 'stolen' }, { token: intruder.token }),
      t.client.delete(`/api/v1/keys/${key.id}`, { token: intruder.token }),
      t.client.post(`/api/v1/keys/${key.id}/regenerate`, undefined, { token: intruder.token }),
      t.client.get(`/api/v1/keys/${key.id}/usage`, { token: intruder.token }),
    ];
    const unknown = await t.client.get('/api/v1/keys/key_doesnotexist/usage', { token: intruder.token });
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe(unknown.body.error.code);
    }
    expect((await t.client.get('/api/v1/keys', { token: intruder.token })).body.data.total).toBe(0);
    expect((await keyProbe(key.secret)).status).toBe(200);
    const ownerView = (await t.client.get('/api/v1/keys', { token: owner.token })).body.data.apiKeys[0];
    expect(ownerView).toMatchObject({ name: 'test key', isActive: true });
  });
});

describe('getApiKeyUsage', () => {
  it('when a key made requests, then usage counts them by outcome, endpoint and hour', async () => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user, { permissions: ['search'] });
    for (let i = 0; i < 3; i += 1) expect((await keyProbe(key.secret)).status).toBe(200);
    expect((await t.client.get('/api/v1/rate-limit/analytics', { token: key.secret })).status).toBe(403);
    await t.flush();
    const res = await t.client.get(`/api/v1/keys/${key.id}/usage?days=1&period=hour&limit=24`, { token: user.token });
    expect(res.status).toBe(200);
    const usage = res.body.data.usage;
    expect(usage).toMatchObject({ keyId: key.id, days: 1, period: 'hour', totalRequests: 4, successfulRequests: 3, failedRequests: 1 });
    expect(usage.topEndpoints[0]).toMatchObject({ endpoint: 'GET /api/v1/rate-limit/status', requests: 3 });
    expect(usage.hourlyBreakdown.reduce((sum: number, point: { requests: number }) => sum + point.requests, 0)).toBe(4);
    const listed = (await t.client.get('/api/v1/keys', { token: user.token })).body.data.apiKeys[0];
    expect(listed.usageCount).toBe(4);
    expect(listed.lastUsed).not.toBeNull();
  });

  it('when a key made requests, then usage says how much of its hourly allowance is left, as its own limit counts it', async () => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user, { permissions: ['analytics'] });
    // Counted requests (the rate-limit status itself is exempt from the limit it reports).
    for (let i = 0; i < 3; i += 1) expect((await t.client.get('/api/v1/search/history', { token: key.secret })).status).toBe(200);
    const res = await t.client.get(`/api/v1/keys/${key.id}/usage?days=1`, { token: user.token });
    expect(res.status).toBe(200);
    // The free tier's 1,000 requests an hour, the three above counted in its sliding hour.
    expect(res.body.data.usage.allowance).toMatchObject({ limit: 1000, used: 3, remaining: 997 });
    expect(Date.parse(res.body.data.usage.allowance.resetAt)).toBeGreaterThan(Date.now());
  });

  it.each(['days=0', 'days=366', 'period=year', 'limit=0'])('when the query is %s, then 400', async (query) => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user);
    expect((await t.client.get(`/api/v1/keys/${key.id}/usage?${query}`, { token: user.token })).status).toBe(400);
  });
});
