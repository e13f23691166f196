/**
 * Publishable search keys: made and managed with a JWT like secret keys, public by design (listed in
 * full), able only to search and ask for suggestions, only in their databases and tables, only from their origins,
 * and limited per client IP. Secret keys are refused from web pages and otherwise work as before.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, fromIp, randomIp, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { grantPlan } from '../support/operator.js';
import { CORPUS, seedSqlite } from '../support/search-corpus.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const shopFile = `shop-${suffix}.db`;
const otherFile = `other-${suffix}.db`;
const shop = 'https://shop.example.com';

let t: TestServer;
let owner: TestUser;
let secret: TestKey;
let db: { shop: string; other: string; live: string };

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  // The owner's own SQLite folder: the only one its connections can name.
  const dir = join(t.dataDir, 'sqlite', owner.id);
  await seedSqlite(dir, shopFile, 'products');
  await onSqlite(dir, shopFile, [
    'CREATE TABLE staff (id INTEGER PRIMARY KEY, note TEXT)',
    "INSERT INTO staff VALUES (1, 'Confidential payroll for the headphones team'), (2, 'Confidential salaries')",
  ]);
  await seedSqlite(dir, otherFile, 'products', CORPUS.slice(0, 6));
  secret = await createKey(t.client, owner, { permissions: ['search', 'analytics'] });
  const connect = async (file: string, environment: string) => {
    const res = await t.client.post('/api/v1/databases', { name: file, engine: 'sqlite', database: file, environment }, { token: owner.token });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.database.id as string;
  };
  db = { shop: await connect(shopFile, 'test'), other: await connect(otherFile, 'test'), live: await connect(otherFile, 'live') };
}, 120_000);
afterEach(() => t.assertContract());
afterAll(() => t.stop(), 60_000);

interface Publishable {
  id: string;
  value: string;
  body: any;
}

async function createPublishable(overrides: Record<string, unknown> = {}, user = owner): Promise<Publishable> {
  const res = await t.client.post('/api/v1/keys/publishable', { name: 'Storefront', databases: [db.shop], tables: ['products'], allowedOrigins: [shop], ...overrides }, { token: user.token });
  if (res.status !== 201) throw new Error(`publishable key: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.apiKey.id, value: res.body.data.publishableKey, body: res.body };
}

const search = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.client.post('/api/v1/search', body, { token: key, headers: { ...fromIp().headers, ...headers } });
const suggest = (key: string, q: string) => t.client.get(`/api/v1/search/suggestions?q=${encodeURIComponent(q)}`, { token: key, headers: fromIp().headers });

const expectError = (res: { status: number; body: any }, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};

describe('createPublishableKey', () => {
  it('when made, then 201 with a quarry_pk_ value, search only, origins as browsers send them and the tier\'s per-IP default', async () => {
    const key = await createPublishable({ allowedOrigins: ['https://Shop.Example.com/', 'http://localhost:8080'], environment: 'test' });
    expect(key.value).toMatch(/^quarry_pk_test_[A-Za-z0-9]{52}$/);
    expect(key.body.data.apiKey).toMatchObject({
      type: 'publishable', keyPrefix: key.value.slice(0, 'quarry_pk_test_'.length + 8), environment: 'test', permissions: ['search'],
      rateLimitTier: 'free', publishableKey: key.value, allowedOrigins: [shop, 'http://localhost:8080'], databases: [db.shop],
      tables: ['products'], requestsPerIpPerHour: 100,
    });
  });

  it('when the keys are listed, then a publishable key is shown in full with its restrictions and a secret key never is', async () => {
    const key = await createPublishable({ rateLimitTier: 'pro', requestsPerIpPerHour: 250 });
    const res = await t.client.get('/api/v1/keys', { token: owner.token });
    const listed = res.body.data.apiKeys.find((k: { id: string }) => k.id === key.id);
    expect(listed).toMatchObject({ type: 'publishable', publishableKey: key.value, allowedOrigins: [shop], databases: [db.shop], tables: ['products'], requestsPerIpPerHour: 250 });
    const secretListed = res.body.data.apiKeys.find((k: { id: string }) => k.id === secret.id);
    expect(secretListed.type).toBe('secret');
    expect(Object.keys(secretListed)).not.toContain('publishableKey');
    expect(JSON.stringify(res.body)).not.toContain(secret.secret);
  });

  it('when a database is unknown or another user\'s, then 404; of the other environment, then 400 naming it; nothing is made', async () => {
    const stranger = await registerUser(t.client);
    const before = (await t.client.get('/api/v1/keys', { token: owner.token })).body.data.total;
    expectError(await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: ['db_nope'], allowedOrigins: [shop] }, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.shop], allowedOrigins: [shop] }, { token: stranger.token }), 404, 'NOT_FOUND');
    const live = await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.live], allowedOrigins: [shop], environment: 'test' }, { token: owner.token });
    expectError(live, 400, 'VALIDATION_ERROR');
    expect(live.body.error.details.errors).toEqual([{ location: 'body', path: '/databases/0', message: 'is a live connection; a test key searches only test connections' }]);
    expect((await t.client.get('/api/v1/keys', { token: owner.token })).body.data.total).toBe(before);
  });

  it('when an origin is not exactly an origin, or permissions or no origins are asked for, then 400 naming the field', async () => {
    const withUser = await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.shop], allowedOrigins: ['https://me:pw@shop.example.com'] }, { token: owner.token });
    expectError(withUser, 400, 'VALIDATION_ERROR');
    expect(withUser.body.error.details.errors[0]).toMatchObject({ path: '/allowedOrigins/0' });
    const withPath = await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.shop], allowedOrigins: ['https://shop.example.com/search'] }, { token: owner.token });
    expect(withPath.body.error.details.errors[0]).toMatchObject({ location: 'body', path: '/allowedOrigins/0' });
    const widened = await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.shop], allowedOrigins: [shop], permissions: ['analytics'] }, { token: owner.token });
    expect(widened.body.error.details.errors[0]).toMatchObject({ path: '/permissions', message: 'is not a known field' });
    expectError(await t.client.post('/api/v1/keys/publishable', { name: 'x', databases: [db.shop], allowedOrigins: [] }, { token: owner.token }), 400, 'VALIDATION_ERROR');
  });
});

describe('what a publishable key may do', () => {
  let key: Publishable;
  beforeAll(async () => {
    key = await createPublishable();
  });

  it('when it searches from a listed origin or from no page at all, then it finds rows of its own table of its own database only', async () => {
    for (const headers of [{ origin: shop }, {}] as Record<string, string>[]) {
      const res = await search(key.value, { query: 'headphones' }, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.results.length).toBeGreaterThan(0);
      expect(new Set(res.body.data.results.map((r: { databaseId: string; table: string }) => `${r.databaseId}/${r.table}`))).toEqual(new Set([`${db.shop}/products`]));
      expect(res.body.data.databases.map((d: { databaseId: string }) => d.databaseId)).toEqual([db.shop]);
    }
    // The same words are in the staff table and in the other database: a secret key finds them there.
    const wide = await search(secret.secret, { query: 'headphones' });
    expect(new Set(wide.body.data.results.map((r: { databaseId: string }) => r.databaseId))).toEqual(new Set([db.shop, db.other]));
  });

  it('when it names a database or table it was not given, then 403 INSUFFICIENT_PERMISSIONS; a narrower request of its own is fine', async () => {
    expectError(await search(key.value, { query: 'headphones', databases: [db.other] }), 403, 'INSUFFICIENT_PERMISSIONS');
    expectError(await search(key.value, { query: 'payroll', tables: ['staff'] }), 403, 'INSUFFICIENT_PERMISSIONS');
    expect((await search(key.value, { query: 'headphones', databases: [db.shop], tables: ['products'] })).status).toBe(200);
  });

  it('when a page of another origin uses it, then 403 ORIGIN_NOT_ALLOWED naming the origin, also for the opaque origin "null"', async () => {
    const res = await search(key.value, { query: 'headphones' }, { origin: 'https://copycat.example.net' });
    expectError(res, 403, 'ORIGIN_NOT_ALLOWED');
    expect(res.body.error.details).toEqual({ origin: 'https://copycat.example.net', allowedOrigins: [shop] });
    expectError(await search(key.value, { query: 'headphones' }, { origin: 'null' }), 403, 'ORIGIN_NOT_ALLOWED');
  });

  it('when it calls any operation but search and suggestions, then 403 INSUFFICIENT_PERMISSIONS; JWT operations refuse it as a key', async () => {
    for (const path of ['/api/v1/rate-limit/status', '/api/v1/rate-limit/analytics', '/api/v1/search/history', '/api/v1/search/trends', '/health']) {
      expectError(await t.client.get(path, { token: key.value }), 403, 'INSUFFICIENT_PERMISSIONS');
    }
    expectError(await t.client.get('/api/v1/keys', { token: key.value }), 401, 'INVALID_TOKEN');
    expectError(await t.client.get('/api/v1/databases', { token: key.value }), 401, 'INVALID_TOKEN');
  });

  it('when it asks for suggestions, then no past query is suggested and completions and spelling fixes come only from its own tables', async () => {
    await search(secret.secret, { query: 'headphones for the payroll' });
    await t.server.services.searchRecorder.flush();
    const fromKey = await suggest(key.value, 'headphon');
    expect(fromKey.status).toBe(200);
    expect(fromKey.body.data.suggestions).toEqual([{ text: 'headphones', source: 'vocabulary', count: expect.any(Number) }]);
    expect((await suggest(key.value, 'payr')).body.data.suggestions).toEqual([]);
    expect((await suggest(secret.secret, 'headphon')).body.data.suggestions.map((s: { text: string }) => s.text)).toContain('headphones for the payroll');
    // "payrol" is only in the staff table: a fix for the secret key, none for the key limited to products.
    expect((await suggest(secret.secret, 'payrol')).body.data.didYouMean).toEqual(['payroll']);
    expect((await suggest(key.value, 'payrol')).body.data.didYouMean).toEqual([]);
    expect((await suggest(key.value, 'hedphones')).body.data.didYouMean).toEqual(['headphones']);
  });

  it('when its usage is read with the JWT, then the searches it made are counted like a secret key\'s', async () => {
    await t.flush();
    const res = await t.client.get(`/api/v1/keys/${key.id}/usage`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.usage.totalRequests).toBeGreaterThan(0);
    expect(res.body.data.usage.topEndpoints.map((e: { endpoint: string }) => e.endpoint)).toContain('POST /api/v1/search');
  });
});

describe('secret keys and web pages', () => {
  it('when a secret key is sent from a web page (with Origin), then 403 SECRET_KEY_IN_BROWSER; from a server it works as before', async () => {
    const res = await search(secret.secret, { query: 'headphones' }, { origin: shop });
    expectError(res, 403, 'SECRET_KEY_IN_BROWSER');
    expect(res.body.error.message).toContain('publishable key');
    expect((await search(secret.secret, { query: 'headphones' })).status).toBe(200);
    expect((await t.client.get('/api/v1/rate-limit/status', { token: secret.secret })).status).toBe(200);
  });
});

describe('secret keys and Quarry\'s own pages', () => {
  it('when a secret key is sent from Quarry\'s own origin (its console), then it is served; from another origin, even Quarry\'s host on another port or scheme, still 403', async () => {
    const own = new URL(t.server.url);
    const res = await search(secret.secret, { query: 'headphones' }, { origin: own.origin });
    expect(res.status).toBe(200);
    expect(res.body.data.results.length).toBeGreaterThan(0);
    const elsewhere = [shop, `${own.protocol}//${own.hostname}:${Number(own.port) + 1}`, `https://${own.host}`, 'null'];
    for (const origin of elsewhere) {
      const refused = await search(secret.secret, { query: 'headphones' }, { origin });
      expectError(refused, 403, 'SECRET_KEY_IN_BROWSER');
      expect(refused.body.error.details).toEqual({ origin });
    }
  });
});

describe('per client IP', () => {
  it('when one visitor has used the key requestsPerIpPerHour times, then they get 429 and another visitor is still served', async () => {
    const key = await createPublishable({ requestsPerIpPerHour: 3 });
    const visitor = randomIp();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i += 1) {
      last = await t.client.post('/api/v1/search', { query: 'battery' }, { token: key.value, headers: { 'X-Forwarded-For': visitor } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expectError(last!, 429, 'RATE_LIMIT_EXCEEDED');
    expect(last!.headers.get('x-ratelimit-limit')).toBe('3');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = await t.client.post('/api/v1/search', { query: 'battery' }, { token: key.value, headers: { 'X-Forwarded-For': randomIp() } });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});

describe('managing a publishable key', () => {
  it('when it is regenerated, then the new value is in publishableKey with the same restrictions and the old value is 401 KEY_REVOKED', async () => {
    const key = await createPublishable({ requestsPerIpPerHour: 42 });
    const res = await t.client.post(`/api/v1/keys/${key.id}/regenerate`, undefined, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty('secretKey');
    expect(res.body.data.publishableKey).toMatch(/^quarry_pk_test_/);
    expect(res.body.data.apiKey).toMatchObject({ type: 'publishable', publishableKey: res.body.data.publishableKey, allowedOrigins: [shop], databases: [db.shop], tables: ['products'], requestsPerIpPerHour: 42 });
    expectError(await search(key.value, { query: 'headphones' }), 401, 'KEY_REVOKED');
    expect((await search(res.body.data.publishableKey, { query: 'headphones' }, { origin: shop })).status).toBe(200);
  });

  it('when its origins and tables are updated, then they apply at once; widening its permissions is 400', async () => {
    const key = await createPublishable();
    expectError(await search(key.value, { query: 'headphones' }, { origin: 'http://localhost:8080' }), 403, 'ORIGIN_NOT_ALLOWED');
    const updated = await t.client.put(`/api/v1/keys/${key.id}`, { allowedOrigins: ['http://localhost:8080'], tables: [] }, { token: owner.token });
    expect(updated.status).toBe(200);
    expect(updated.body.data.apiKey).toMatchObject({ allowedOrigins: ['http://localhost:8080'], tables: [] });
    const now = await search(key.value, { query: 'payroll' }, { origin: 'http://localhost:8080' });
    expect(now.status).toBe(200);
    expect(now.body.data.results.map((r: { table: string }) => r.table)).toContain('staff');
    const widened = await t.client.put(`/api/v1/keys/${key.id}`, { permissions: ['search', 'analytics'] }, { token: owner.token });
    expectError(widened, 400, 'VALIDATION_ERROR');
    expect(widened.body.error.details.errors[0].path).toBe('/permissions');
  });

  it('when a secret key is given publishable restrictions, then 400; when a publishable key is revoked, then it is 401 KEY_REVOKED', async () => {
    const res = await t.client.put(`/api/v1/keys/${secret.id}`, { allowedOrigins: [shop] }, { token: owner.token });
    expectError(res, 400, 'VALIDATION_ERROR');
    const key = await createPublishable();
    expect((await t.client.delete(`/api/v1/keys/${key.id}`, { token: owner.token })).status).toBe(200);
    expectError(await search(key.value, { query: 'headphones' }), 401, 'KEY_REVOKED');
  });

  it('when a publishable key\'s database is deleted, then its searches go on over the databases it has left', async () => {
    const spare = await t.client.post('/api/v1/databases', { name: 'spare', engine: 'sqlite', database: otherFile, environment: 'test' }, { token: owner.token });
    const key = await createPublishable({ databases: [db.shop, spare.body.data.database.id], tables: [] });
    expect((await t.client.delete(`/api/v1/databases/${spare.body.data.database.id}`, { token: owner.token })).status).toBe(200);
    const res = await search(key.value, { query: 'headphones' });
    expect(res.status).toBe(200);
    expect(res.body.data.databases.map((d: { databaseId: string }) => d.databaseId)).toEqual([db.shop]);
  });
});
