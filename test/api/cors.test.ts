/**
 * Cross-origin access: @koa/cors, outermost, answers the preflight of every path and method of
 * openapi.yaml for the origins of CORS_ORIGINS, exposes the rate-limit headers and X-Request-Id to scripts, and
 * gives any other origin (and any request without Origin) no CORS header at all. CORS_ORIGINS=* is in
 * test/unit/http/cors.test.ts (one server per test process).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ALLOWED_HEADERS, EXPOSED_HEADERS, PREFLIGHT_MAX_AGE } from '../../src/http/cors.js';
import { Contract } from '../contract/support/contract.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const contract = new Contract();
const shop = 'https://shop.example.com';
const stranger = 'https://evil.example.net';

let listed: TestServer;
let user: TestUser;

beforeAll(async () => {
  listed = await startTestServer({ CORS_ORIGINS: `${shop}, http://localhost:8080` });
  user = await registerUser(listed.client);
});
afterEach(() => listed.assertContract());
afterAll(() => listed?.stop());

/** A concrete URL for a path template (the template's own braces would do too, but ids look like ids). */
const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, 'id_1');

function preflight(server: TestServer, path: string, method: string, origin: string) {
  return fetch(server.server.url + urlOf(path), {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });
}

const corsHeaders = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'));
const listOf = (value: string | null) => (value ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);

describe('preflight (OPTIONS with Access-Control-Request-Method)', () => {
  it(`when a listed origin preflights each of the ${contract.operations.length} operations of openapi.yaml, then 204 allows its method, the credential header and JSON, for ${PREFLIGHT_MAX_AGE} s`, async () => {
    const failures: string[] = [];
    for (const operation of contract.operations) {
      const res = await preflight(listed, operation.path, operation.method, shop);
      const problems = [
        res.status !== 204 && `status ${res.status}`,
        res.headers.get('access-control-allow-origin') !== shop && `allow-origin ${res.headers.get('access-control-allow-origin')}`,
        !listOf(res.headers.get('access-control-allow-methods')).includes(operation.method.toLowerCase()) && `allow-methods ${res.headers.get('access-control-allow-methods')}`,
        !ALLOWED_HEADERS.every((h) => listOf(res.headers.get('access-control-allow-headers')).includes(h.toLowerCase())) && `allow-headers ${res.headers.get('access-control-allow-headers')}`,
        res.headers.get('access-control-max-age') !== String(PREFLIGHT_MAX_AGE) && `max-age ${res.headers.get('access-control-max-age')}`,
        res.headers.get('access-control-allow-credentials') !== null && 'allow-credentials is sent',
      ].filter(Boolean);
      if (problems.length > 0) failures.push(`${operation.method} ${operation.path}: ${problems.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('when an origin that is not listed preflights, then the answer carries no CORS header, so the browser stops there', async () => {
    for (const operation of [contract.operation('searchDatabases'), contract.operation('createApiKey'), contract.operation('getHealth')]) {
      const res = await preflight(listed, operation.path, operation.method, stranger);
      expect(corsHeaders(res.headers), `${operation.operationId}`).toEqual([]);
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('actual requests', () => {
  it('when a listed origin calls, then the answer names that origin, varies by Origin and exposes X-Request-Id and the rate-limit headers', async () => {
    const res = await listed.client.get('/api/v1/keys', { token: user.token, headers: { origin: shop } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(shop);
    expect(listOf(res.headers.get('vary'))).toContain('origin');
    expect(listOf(res.headers.get('access-control-expose-headers')).sort()).toEqual(EXPOSED_HEADERS.map((h) => h.toLowerCase()).sort());
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('when an error is answered to a listed origin, then it carries the CORS headers too, so the page can read the error envelope', async () => {
    const res = await listed.client.get('/api/v1/rate-limit/status', { headers: { origin: shop } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('AUTH_REQUIRED');
    expect(res.headers.get('access-control-allow-origin')).toBe(shop);
  });

  it('when an origin that is not listed calls, then the answer has no CORS header (the browser hides it from the page)', async () => {
    const res = await listed.client.get('/health', { headers: { origin: stranger } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res.headers)).toEqual([]);
  });

  it('when a request has no Origin (a server, curl), then no CORS header is added', async () => {
    const res = await listed.client.get('/health');
    expect(res.status).toBe(200);
    expect(corsHeaders(res.headers)).toEqual([]);
  });
});
