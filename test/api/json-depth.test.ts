/**
 * A JSON body's nesting is bounded where it is parsed (MAX_JSON_DEPTH): a deeply nested filter used to exhaust the
 * stack in request validation and answer 500, with nothing more than a publishable key.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { createTenant, HOSTILE_ENV, type Tenant } from '../support/hostile.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let tenant: Tenant;
let publishable: string;
beforeAll(async () => {
  t = await startTestServer(HOSTILE_ENV);
  tenant = await createTenant(t, 'deep');
  const created = await t.client.post('/api/v1/keys/publishable', { name: 'site', environment: 'test', databases: [tenant.databaseId], allowedOrigins: ['https://shop.example.com'] }, { token: tenant.user.token });
  expect(created.status).toBe(201);
  publishable = created.body.data.publishableKey;
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

/** A search body whose filter is `nots` nested `not`s around one condition: the body nests nots + 2 levels. */
function searchWithNots(nots: number): string {
  return '{"query":"battery","filter":' + '{"not":'.repeat(nots) + '{"column":"title","op":"eq","value":"x"}' + '}'.repeat(nots) + '}';
}

const search = (raw: string) =>
  t.client.post('/api/v1/search', undefined, { raw, token: publishable, headers: { 'content-type': 'application/json', origin: 'https://shop.example.com' } });

describe('the nesting of a JSON body', () => {
  it('when a publishable key searches with a filter of 10,000 nested nots (80 KB), then 400 INVALID_JSON naming the limit, and the server still answers', async () => {
    const raw = searchWithNots(10_000);
    expect(raw.length).toBeGreaterThan(80_000);
    const res = await search(raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'INVALID_JSON', message: `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`, details: { maxDepth: MAX_JSON_DEPTH },
    });
    expect(res.headers.get('x-request-id')).toBe(res.body.meta.requestId);
    expect((await t.client.get('/health')).status).toBe(200);
  });

  it('when the body nests one level more than the limit, then 400 INVALID_JSON', async () => {
    const res = await search(searchWithNots(MAX_JSON_DEPTH - 1));
    expect(res.body.error).toMatchObject({ code: 'INVALID_JSON', details: { maxDepth: MAX_JSON_DEPTH } });
  });

  it('when the body nests exactly to the limit, then it is parsed and validated: the filter is refused for its own depth', async () => {
    const res = await search(searchWithNots(MAX_JSON_DEPTH - 2));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain('nests deeper than');
  });

  it('when any JSON operation gets an array nested past the limit, then 400 INVALID_JSON before validation', async () => {
    const raw = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
    const res = await t.client.post('/api/v1/auth/login', undefined, { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_JSON', details: { maxDepth: MAX_JSON_DEPTH } });
  });
});
