/**
 * A URL whose path or query string is not valid percent-encoding names nothing: every operation answers 400
 * MALFORMED_URL in the error envelope, before routing or credentials, instead of failing to decode a parameter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Contract } from '../contract/support/contract.js';
import type { ApiResponse } from '../support/api-client.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const contract = new Contract();
const templated = contract.operations.filter((operation) => operation.path.includes('{'));
/** Escapes of no UTF-8 text, a truncated escape, and a lone percent sign. */
const MALFORMED = ['%FF%FE', '%E0%A4%A', '%'];

let t: TestServer;
let user: TestUser;
beforeAll(async () => {
  t = await startTestServer();
  user = await registerUser(t.client);
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

function expectMalformed(res: ApiResponse, location: 'path' | 'query', context: string): void {
  expect(res.status, context).toBe(400);
  expect(res.body, context).toMatchObject({
    success: false,
    error: { code: 'MALFORMED_URL', message: expect.stringContaining('percent-encoding'), details: { location } },
    meta: { requestId: expect.any(String) },
  });
  expect(res.headers.get('x-request-id'), context).toBe(res.body.meta.requestId);
}

describe('a URL that does not decode', () => {
  it(`when any of the ${templated.length} templated paths of openapi.yaml gets malformed percent-encoding in a parameter, then 400 MALFORMED_URL without credentials`, async () => {
    expect(templated.length).toBeGreaterThan(15);
    for (const operation of templated) {
      for (const bad of MALFORMED) {
        const url = operation.path.replace(/\{[^}]+\}/g, bad);
        expectMalformed(await t.client.request(operation.method, url), 'path', `${operation.operationId} ${url}`);
      }
    }
  });

  it('when a path parameter is malformed and a valid JWT is sent, then still 400 MALFORMED_URL (not 404 or 500)', async () => {
    expectMalformed(await t.client.get('/api/v1/databases/%FF%FE', { token: user.token }), 'path', 'getDatabase with a JWT');
  });

  it('when the query string of any operation is malformed, then 400 MALFORMED_URL naming the query', async () => {
    for (const operation of contract.operations) {
      const path = operation.path.replace(/\{[^}]+\}/g, 'anything');
      for (const bad of MALFORMED) {
        const url = `${path}?limit=${bad}`;
        expectMalformed(await t.client.request(operation.method, url, undefined, { token: user.token }), 'query', `${operation.operationId} ${url}`);
      }
    }
  });

  it('when a path no route has is malformed, then 400 MALFORMED_URL rather than 404', async () => {
    expectMalformed(await t.client.get('/api/v1/nothing-here/%FF'), 'path', 'unknown route');
  });

  it('when the path and query hold well-formed escapes of UTF-8 (and NUL), then they route as usual', async () => {
    const res = await t.client.get('/api/v1/databases/%E2%82%AC%00x', { token: user.token });
    expect([res.status, res.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const list = await t.client.get('/api/v1/databases?environment=%74est', { token: user.token });
    expect(list.status).toBe(200);
  });
});
