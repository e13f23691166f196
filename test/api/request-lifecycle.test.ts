import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/**
 * openapi-backend's handleRequest runs every request (src/api/backend.ts): routing, security, our policies,
 * validation and the handler, each failure through the one error translator. These drive it through the API.
 */
let t: TestServer;
let user: TestUser;
let key: TestKey;
beforeAll(async () => {
  t = await startTestServer();
  user = await registerUser(t.client);
  key = await createKey(t.client, user);
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const withKey = () => ({ headers: { authorization: `Bearer ${key.secret}` } });

describe('query parameters as the contract declares them (form style, one value each)', () => {
  it('when a number arrives as text within its bounds, then it is coerced and the handler answers', async () => {
    const res = await t.client.get('/api/v1/search/history?limit=3&offset=0', withKey());
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ limit: 3, offset: 0 });
  });

  it('when a parameter is not in the contract, then 400 naming it as not a known field', async () => {
    const res = await t.client.get('/api/v1/search/history?colour=red', withKey());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { errors: [{ location: 'query', path: '/colour', message: 'is not a known field' }] } });
  });

  it('when bracket syntax names a parameter, then it is an unknown parameter, not a nested object', async () => {
    const res = await t.client.get('/api/v1/search/history?limit[x]=1', withKey());
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors).toEqual([expect.objectContaining({ location: 'query', path: '/limit[x]', message: 'is not a known field' })]);
  });

  it('when a parameter is named __proto__, then it is an unknown parameter and no prototype changes', async () => {
    const res = await t.client.get('/api/v1/search/history?__proto__=x&limit=2', withKey());
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors).toEqual([expect.objectContaining({ path: '/__proto__', message: 'is not a known field' })]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('when a one-value parameter is repeated, then 400 on that parameter', async () => {
    const res = await t.client.get('/api/v1/search/history?limit=1&limit=2', withKey());
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0]).toMatchObject({ location: 'query', path: '/limit' });
  });

  it('when an enum parameter has another value, then 400 listing the allowed values', async () => {
    const res = await t.client.get('/api/v1/rate-limit/analytics?period=year', withKey());
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0]).toMatchObject({ path: '/period', message: expect.stringContaining('hour, day, week') });
  });
});

describe('routing and security', () => {
  it('when a path parameter is given, then the handler reads it (an unknown id is 404 NOT_FOUND, not ROUTE_NOT_FOUND)', async () => {
    const res = await t.client.get('/api/v1/databases/db_unknown', { token: user.token });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', details: { id: 'db_unknown' } });
  });

  it('when a path ends with a slash, then it routes as without one', async () => {
    const res = await t.client.get('/api/v1/auth/profile/', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.user.id).toBe(user.id);
  });

  it('when a secured operation gets no credential, then 401 AUTH_REQUIRED in the envelope, before validation', async () => {
    const res = await t.client.get('/api/v1/search/history?limit=999');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, error: { code: 'AUTH_REQUIRED' }, meta: { requestId: res.headers.get('x-request-id') } });
  });

  it('when the key is revoked, then the most specific reason (401 KEY_REVOKED), not a generic one', async () => {
    const revoked = await createKey(t.client, user);
    await t.client.delete(`/api/v1/keys/${revoked.id}`, { token: user.token });
    const res = await t.client.get('/api/v1/search/history', { headers: { authorization: `Bearer ${revoked.secret}` } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('KEY_REVOKED');
  });

  it('when a key request is refused by validation, then it still reports the key window (X-RateLimit-*)', async () => {
    const res = await t.client.get('/api/v1/search/history?limit=0', withKey());
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-ratelimit-tier')).toBe('free');
  });

  it('when a handler answers, then its data is in the success envelope with the request id', async () => {
    const res = await t.client.get('/api/v1/rate-limit/status', { headers: { ...withKey().headers, 'X-Request-Id': 'lifecycle-1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { rateLimit: { tier: 'free' } }, meta: { requestId: 'lifecycle-1', version: '1.0.0' } });
  });
});
