/**
 * The SDK path: a client typed only by the generated `paths` of openapi.yaml (openapi-fetch, no
 * hand-written wire types) drives a partner's whole first session against the in-process server: register, log
 * in, mint a key, connect a SQLite database, read its schema, search it, read the rate-limit status. It compiles
 * under `tsc --noEmit`, so a contract change that breaks this flow for SDK users fails the type check as well.
 * (openapi-typescript marks fields with a default as required, so the bodies spell out `ssl`, `limit`, `offset`.)
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { components, paths } from '../../generated/openapi.js';
import { randomIp, uniqueEmail } from '../support/factories.js';
import { seedSqlite } from '../support/search-corpus.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

type ErrorCode = components['schemas']['ErrorEnvelope']['error']['code'];

const rows = [
  { id: 1, title: 'Granite countertop sealer', body: 'Protects quarried stone surfaces from stains.' },
  { id: 2, title: 'Marble polishing kit', body: 'Brings back the shine of marble and granite.' },
  { id: 3, title: 'Garden hose', body: 'Fifty feet of flexible hose.' },
];

let t: TestServer;
/** The bytes of a SQLite database the user uploads (they have no shell on the server). */
let catalog: Buffer;
/** Every request of one client comes from one address (register and login are limited per client IP). */
let anonymous: Client<paths>;

beforeAll(async () => {
  t = await startTestServer();
  catalog = readFileSync(await seedSqlite(mkdtempSync(join(tmpdir(), 'quarry-sdk-client-')), 'catalog.db', 'products', rows));
  anonymous = createClient<paths>({ baseUrl: t.server.url, headers: { 'X-Forwarded-For': randomIp() } });
}, 60_000);
afterEach(() => t.assertContract());
afterAll(() => t?.stop(), 30_000);

/** A client that sends one credential (a JWT or an API key) on every request. */
const clientWith = (token: string) => createClient<paths>({ baseUrl: t.server.url, headers: { authorization: `Bearer ${token}` } });

describe('a typed openapi-fetch client', () => {
  it('when a new user registers, logs in, mints a key, connects SQLite and searches, then every step answers per contract', async () => {
    const email = uniqueEmail('sdk');
    const password = 'correct-horse-42';

    const registered = await anonymous.POST('/api/v1/auth/register', { body: { email, password, name: 'SDK User' } });
    expect(registered.response.status).toBe(201);
    expect(registered.data?.data.user.email).toBe(email);

    const login = await anonymous.POST('/api/v1/auth/login', { body: { email, password } });
    if (!login.data) throw new Error(`login failed: ${JSON.stringify(login.error)}`);
    const account = clientWith(login.data.data.tokens.accessToken);

    const created = await account.POST('/api/v1/keys', { body: { name: 'sdk key', environment: 'test', permissions: ['search'], rateLimitTier: 'free' } });
    if (!created.data) throw new Error(`key creation failed: ${JSON.stringify(created.error)}`);
    expect(created.data.data.apiKey).toMatchObject({ environment: 'test', permissions: ['search'] });
    const apiKey = clientWith(created.data.data.secretKey);

    const uploaded = await account.PUT('/api/v1/sqlite-files/{fileName}', {
      params: { path: { fileName: 'catalog.db' } },
      // openapi-typescript types a binary body as string; the bytes go out as they are.
      body: catalog as unknown as string,
      bodySerializer: (bytes) => bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(uploaded.response.status).toBe(201);
    expect(uploaded.data?.data.file).toMatchObject({ name: 'catalog.db', sizeBytes: catalog.length });

    const connected = await account.POST('/api/v1/databases', { body: { name: 'Catalog', engine: 'sqlite', database: 'catalog.db', environment: 'test', ssl: false } });
    if (!connected.data) throw new Error(`connect failed: ${JSON.stringify(connected.error)}`);
    const databaseId = connected.data.data.database.id;
    expect(connected.data.data.database.status).toBe('connected');

    const schema = await account.GET('/api/v1/databases/{databaseId}/schema', { params: { path: { databaseId } } });
    expect(schema.error).toBeUndefined();
    expect(JSON.stringify(schema.data?.data)).toContain('products');

    const search = await apiKey.POST('/api/v1/search', { body: { query: 'granite', databases: [databaseId], searchMode: 'natural', limit: 10, offset: 0 } });
    if (!search.data) throw new Error(`search failed: ${search.response.status} ${JSON.stringify(search.error)}`);
    expect(search.response.headers.get('x-ratelimit-tier')).toBe('free');
    expect(search.data.data.results.map((result) => result.fields.title).sort()).toEqual(['Granite countertop sealer', 'Marble polishing kit']);
    expect(search.data.data.databases).toEqual([expect.objectContaining({ databaseId, status: 'ok' })]);

    const status = await apiKey.GET('/api/v1/rate-limit/status');
    if (!status.data) throw new Error(`rate-limit status failed: ${JSON.stringify(status.error)}`);
    expect(status.data.data.rateLimit.tier).toBe('free');
    expect(status.data.data.rateLimit.current.requests).toBeGreaterThanOrEqual(1);
  });

  it('when a call fails, then the error branch is typed as the error envelope with a stable code', async () => {
    const email = uniqueEmail('sdk');
    await anonymous.POST('/api/v1/auth/register', { body: { email, password: 'correct-horse-42', name: 'SDK User' } });
    const login = await anonymous.POST('/api/v1/auth/login', { body: { email, password: 'not-the-password-1' } });
    expect(login.data).toBeUndefined();
    const code: ErrorCode | undefined = login.error?.error.code;
    expect(login.response.status).toBe(401);
    expect(code).toBe('INVALID_CREDENTIALS');

    const search = await clientWith('quarry_sk_test_notakey').POST('/api/v1/search', { body: { query: 'granite', limit: 10, offset: 0 } });
    expect(search.response.status).toBe(401);
    expect(search.error?.error.code).toBe('MALFORMED_API_KEY');
  });
});
