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

describe('validation messages of a value with several forms (a search filter: a condition, and, or, not)', () => {
  const condition = { column: 'price', op: 'lt', value: 5 };
  const filterError = async (filter: unknown) => (await t.client.post('/api/v1/search', { query: 'battery', filter }, withKey())).body.error;

  it.each(['and', 'or'])('when %s holds 51 conditions, then 400 says it may hold at most 50, not that a column is missing', async (group) => {
    const error = await filterError({ [group]: Array(51).fill(condition) });
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toBe(`The request is invalid: body/filter/${group} must NOT have more than 50 items.`);
    expect(error.details.errors).toEqual([{ location: 'body', path: `/filter/${group}`, message: 'must NOT have more than 50 items' }]);
  });

  it('when a condition deep inside not and and has an unknown op, then 400 names that op, not the forms around it', async () => {
    const error = await filterError({ not: { and: [{ column: 'price', op: 'about', value: 5 }] } });
    expect(error.message).toMatch(/^The request is invalid: body\/filter\/not\/and\/0\/op must be equal to one of the allowed values: eq, /);
    expect(error.details.errors).toHaveLength(1);
  });

  it('when a group is empty, then 400 says it needs at least one condition', async () => {
    expect((await filterError({ and: [] })).message).toBe('The request is invalid: body/filter/and must NOT have fewer than 1 items.');
  });

  it('when a condition lacks its op, then 400 names the op', async () => {
    expect((await filterError({ column: 'price' })).message).toBe("The request is invalid: body/filter/op must have required property 'op'.");
  });

  it('when the filter fits none of its forms, then every form says why (nothing is hidden)', async () => {
    const error = await filterError({ colour: 'red' });
    expect(error.details.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['/filter/column', '/filter/and', '/filter/or', '/filter/not', '/filter/colour']));
  });
});
