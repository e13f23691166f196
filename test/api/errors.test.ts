import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registerUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer({ BODY_LIMIT: '2048' })));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const envelope = (code: string) => ({
  success: false,
  error: { code, message: expect.any(String), details: expect.any(Object) },
  meta: { timestamp: expect.any(String), requestId: expect.any(String) },
});

describe('the one error translator', () => {
  it('when the route is unknown, then 404 ROUTE_NOT_FOUND in the envelope', async () => {
    const res = await t.client.get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject(envelope('ROUTE_NOT_FOUND'));
  });

  it('when the method is wrong, then 405 METHOD_NOT_ALLOWED', async () => {
    const res = await t.client.delete('/api/v1/auth/login');
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject(envelope('METHOD_NOT_ALLOWED'));
  });

  it('when the JSON is malformed, then 400 INVALID_JSON', async () => {
    const res = await t.client.request('POST', '/api/v1/auth/login', undefined, { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject(envelope('INVALID_JSON'));
  });

  it('when the JSON is a bare string, then 400 INVALID_JSON saying an object is needed', async () => {
    const res = await t.client.request('POST', '/api/v1/auth/login', undefined, { raw: '"hello"', headers: { 'content-type': 'application/json' } });
    expect(res.body.error).toMatchObject({ code: 'INVALID_JSON', message: 'The request body must be a JSON object.' });
  });

  it('when the body is not JSON, then 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.client.request('POST', '/api/v1/auth/login', undefined, { raw: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject(envelope('UNSUPPORTED_MEDIA_TYPE'));
  });

  it('when a SQLite file is uploaded without Content-Type, then 415 names the type the upload takes (octet-stream), not JSON', async () => {
    const user = await registerUser(t.client);
    const res = await t.client.put('/api/v1/sqlite-files/notes.db', undefined, { token: user.token, raw: new Uint8Array([0x53, 0x51, 0x4c]) });
    expect(res.status).toBe(415);
    expect(res.body.error).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/octet-stream.', details: { contentType: null } });
  });

  it('when an operation that takes no body gets a body that is not JSON, then 415 (a JSON one is ignored)', async () => {
    const user = await registerUser(t.client);
    const text = await t.client.post('/api/v1/auth/logout', undefined, { token: user.token, raw: 'bye', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json.', details: { contentType: 'text/plain' } });
    const json = await t.client.post('/api/v1/auth/logout', { reason: 'done' }, { token: user.token });
    expect(json.status).toBe(200);
  });

  it('when the body is larger than BODY_LIMIT, then 413 PAYLOAD_TOO_LARGE and nothing is created', async () => {
    const res = await t.client.post('/api/v1/auth/register', { email: 'big@example.com', password: 'correct-horse-42', name: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject(envelope('PAYLOAD_TOO_LARGE'));
    expect(res.body.error.details.limit).toBe(2048);
    const login = await t.client.post('/api/v1/auth/login', { email: 'big@example.com', password: 'correct-horse-42' });
    expect(login.status).toBe(401);
  });

  it('when the body fails validation, then 400 VALIDATION_ERROR lists every failing field', async () => {
    const res = await t.client.post('/api/v1/auth/register', { email: 'nope', extra: 1 });
    expect(res.status).toBe(400);
    const paths = res.body.error.details.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(['/email', '/extra', '/name', '/password']);
  });

  it('when a query parameter is out of range, then 400 naming the parameter', async () => {
    const user = await registerUser(t.client);
    const res = await t.client.get('/api/v1/keys/key_x/usage?days=500', { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0]).toMatchObject({ location: 'query', path: '/days' });
  });
});

describe('X-Request-Id', () => {
  it('when the client sends a well-formed id, then it is echoed in the header and meta', async () => {
    const res = await t.client.get('/health', { headers: { 'X-Request-Id': 'trace-123.abc' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123.abc');
    expect(res.body.meta.requestId).toBe('trace-123.abc');
  });

  it('when the id is malformed, then a fresh one replaces it, on errors too', async () => {
    const res = await t.client.get('/nope', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.meta.requestId).toBe(res.headers.get('x-request-id'));
  });
});
