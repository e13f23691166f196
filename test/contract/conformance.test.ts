/**
 * Independent conformance: the real server, driven through `prism proxy openapi.yaml <server>`
 * without `--errors`, so the server's own 4xx handling is what answers. Prism checks every request and response
 * against openapi.yaml and reports breaches in `sl-violations`; any breach about a response fails the test, and a
 * request breach is accepted only where the test sends a deliberately invalid request (and then it must be there).
 * The server's own openapi-backend check (t.assertContract) runs as well.
 *
 * Prism quirk: when the server answers 501, Prism does not forward it but answers from its mock ("remocking").
 * Operations not built yet are therefore recognised by a foreign X-Request-Id and checked directly against the
 * server instead: 501 NOT_IMPLEMENTED, valid against the `default` response.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromIp, uniqueEmail } from '../support/factories.js';
import { grantPlan, makeAdmin } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ConformanceProbe, type ProbeResponse } from './support/conformance-probe.js';
import { Contract } from './support/contract.js';
import { startPrism, type PrismProcess } from './support/prism.js';
import { SchemaValidator } from './support/schema-validator.js';

const contract = new Contract();
const validator = new SchemaValidator(contract);
const adminEmail = uniqueEmail('admin');
const password = 'correct-horse-42';

let t: TestServer;
let proxy: PrismProcess;
let api: ConformanceProbe;

beforeAll(async () => {
  t = await startTestServer();
  proxy = await startPrism(['proxy', 'openapi.yaml', t.server.url]);
  api = new ConformanceProbe(proxy.url, contract);
}, 120_000);
afterEach(() => {
  const problems = api.takeProblems();
  t.assertContract();
  expect(problems, `contract problems seen through prism proxy (log tail:\n${proxy.output().slice(-1500)})`).toEqual([]);
});
afterAll(async () => {
  await proxy?.stop();
  await t?.stop();
}, 30_000);

interface Session {
  email: string;
  password: string;
  token: string;
  refreshToken: string;
}

/** Registers through the proxy from a fresh client IP (register allows 5 per hour per IP). */
async function register(email = uniqueEmail(), ip = fromIp()): Promise<Session> {
  const res = await api.post('/api/v1/auth/register', { email, password, name: 'Contract User' }, ip);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { email, password, token: res.body.data.tokens.accessToken, refreshToken: res.body.data.tokens.refreshToken };
}

async function createKey(user: Session, body: Record<string, unknown> = {}): Promise<ProbeResponse> {
  return api.post('/api/v1/keys', { name: 'contract key', environment: 'test', permissions: ['search', 'analytics'], ...body }, { token: user.token });
}

const expectError = (res: ProbeResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};

describe('accounts through prism proxy', () => {
  it('when a user registers, then 201 with the anonymous rate-limit headers; the same email again is 409 EMAIL_TAKEN', async () => {
    const email = uniqueEmail();
    const res = await api.post('/api/v1/auth/register', { email, password, name: 'Ada' }, fromIp());
    expect(res.status).toBe(201);
    expect(res.headers.get('x-ratelimit-tier')).toBe('anonymous');
    expectError(await api.post('/api/v1/auth/register', { email, password, name: 'Ada' }, fromIp()), 409, 'EMAIL_TAKEN');
  });

  it('when the register body breaks the schema, then 400 VALIDATION_ERROR and Prism flags the request', async () => {
    const res = await api.post('/api/v1/auth/register', { email: 'not-an-email', password, name: 'A' }, { ...fromIp(), invalidRequest: true });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.requestViolations.map((v) => v.location.join('.'))).toContain('request.body.email');
  });

  it('when the register body is not JSON, then 415 UNSUPPORTED_MEDIA_TYPE and Prism flags the request', async () => {
    const res = await api.post('/api/v1/auth/register', undefined, { raw: 'email=a@example.com', headers: { 'content-type': 'text/plain', ...fromIp().headers }, invalidRequest: true });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('when the register body is larger than 1 MiB, then 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await api.post('/api/v1/auth/register', { email: uniqueEmail(), password, name: 'x'.repeat(1_100_000) }, { ...fromIp(), invalidRequest: true });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('when one client IP registers a sixth time, then 429 with Retry-After; another IP is unaffected (the proxy forwards X-Forwarded-For as sent)', async () => {
    const ip = fromIp();
    const statuses: number[] = [];
    let last: ProbeResponse | undefined;
    for (let i = 0; i < 6; i += 1) {
      last = await api.post('/api/v1/auth/register', { email: uniqueEmail(), password, name: 'R' }, ip);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expectError(last!, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    await register();
  });

  it('when a user logs in, then 200 with a session; a wrong password or an unknown email is 401 INVALID_CREDENTIALS', async () => {
    const user = await register();
    const ip = fromIp();
    const ok = await api.post('/api/v1/auth/login', { email: user.email, password }, ip);
    expect(ok.status).toBe(200);
    expect(ok.body.data.token).toBe(ok.body.data.tokens.accessToken);
    expectError(await api.post('/api/v1/auth/login', { email: user.email, password: 'wrong-horse-42' }, ip), 401, 'INVALID_CREDENTIALS');
    expectError(await api.post('/api/v1/auth/login', { email: uniqueEmail('nobody'), password }, ip), 401, 'INVALID_CREDENTIALS');
  });

  it('when a refresh token is exchanged, then 200 with a new pair; using it a second time is 401', async () => {
    const user = await register();
    const refreshed = await api.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.tokens.refreshToken).not.toBe(user.refreshToken);
    expect((await api.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken })).status).toBe(401);
  });

  it('when the profile is read and changed, then 200; an unknown field is 400, a taken email 409, no credential 401', async () => {
    const user = await register();
    const other = await register();
    const read = await api.get('/api/v1/auth/profile', { token: user.token });
    expect(read.status).toBe(200);
    expect(read.body.data.user.email).toBe(user.email);
    const renamed = await api.put('/api/v1/auth/profile', { name: 'Ada King' }, { token: user.token });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.user.name).toBe('Ada King');
    const role = await api.put('/api/v1/auth/profile', { role: 'admin' }, { token: user.token, invalidRequest: true });
    expectError(role, 400, 'VALIDATION_ERROR');
    expect(role.requestViolations.length).toBeGreaterThan(0);
    expectError(await api.put('/api/v1/auth/profile', { email: other.email, currentPassword: password }, { token: user.token }), 409, 'EMAIL_TAKEN');
    const anonymous = await api.get('/api/v1/auth/profile', { invalidRequest: true });
    expectError(anonymous, 401, 'AUTH_REQUIRED');
    expect(anonymous.requestViolations.map((v) => v.code)).toContain(401);
  });

  it('when the password is changed, then 200 with a new session and the old token is 401; a wrong current password is 401', async () => {
    const user = await register();
    expectError(await api.post('/api/v1/auth/change-password', { currentPassword: 'wrong-horse-42', newPassword: 'battery-staple-77' }, { token: user.token }), 401, 'INVALID_CREDENTIALS');
    const changed = await api.post('/api/v1/auth/change-password', { currentPassword: password, newPassword: 'battery-staple-77' }, { token: user.token });
    expect(changed.status).toBe(200);
    expect((await api.get('/api/v1/auth/profile', { token: user.token })).status).toBe(401);
    expect((await api.get('/api/v1/auth/profile', { token: changed.body.data.tokens.accessToken })).status).toBe(200);
  });

  it('when a user logs out, then 200 and the token is 401 SESSION_ENDED afterwards', async () => {
    const user = await register();
    expect((await api.post('/api/v1/auth/logout', undefined, { token: user.token })).status).toBe(200);
    expectError(await api.get('/api/v1/auth/profile', { token: user.token }), 401, 'SESSION_ENDED');
  });
});

describe('management and health through prism proxy', () => {
  it('when setup is called, then 201 with the first key; a second call is 409 SETUP_ALREADY_COMPLETED', async () => {
    const user = await register();
    const first = await api.post('/api/v1/management/setup', { name: 'My first key' }, { token: user.token });
    expect(first.status).toBe(201);
    expect(first.body.data.apiKey).toMatchObject({ environment: 'test', rateLimitTier: 'free' });
    expectError(await api.post('/api/v1/management/setup', undefined, { token: user.token }), 409, 'SETUP_ALREADY_COMPLETED');
  });

  it.each(['/health', '/api/v1/management/health'])('when %s is called without a key, with a key and with a bad key, then 200 with what it knows of the caller', async (path) => {
    const user = await register();
    const key = (await createKey(user)).body.data.secretKey as string;
    const anonymous = await api.get(path);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data).toMatchObject({ authenticated: false, keyInfo: null });
    const withKey = await api.get(path, { token: key });
    expect(withKey.status).toBe(200);
    expect(withKey.body.data).toMatchObject({ authenticated: true, keyInfo: { tier: 'free', permissions: ['search', 'analytics'] } });
    const badKey = await api.get(path, { token: 'quarry_sk_test_' + 'x'.repeat(52) });
    expect(badKey.status).toBe(200);
    expect(badKey.body.data.authenticated).toBe(false);
  });

  it('when an admin reads the migration status, then 200; a plain user is 403 ADMIN_REQUIRED', async () => {
    const admin = await register(adminEmail);
    await makeAdmin(t, admin);
    const user = await register();
    const status = await api.get('/api/v1/management/migration-status', { token: admin.token });
    expect(status.status).toBe(200);
    expect(status.body.data.upToDate).toBe(true);
    expectError(await api.get('/api/v1/management/migration-status', { token: user.token }), 403, 'ADMIN_REQUIRED');
  });
});

describe('keys through prism proxy', () => {
  const unknownKey = 'key_doesNotExist0000000000';

  it('when a key is created and listed, then 201 with the secret once and 200 with the key; database:read is 400', async () => {
    const user = await register();
    expectError(await createKey(user, { name: 'Above the plan', rateLimitTier: 'pro' }), 403, 'TIER_ABOVE_PLAN');
    await grantPlan(t, user, 'enterprise');
    const created = await createKey(user, { name: 'Production search', rateLimitTier: 'pro', expiresAt: '2099-12-31' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-ratelimit-limit')).toBe('20');
    const listed = await api.get('/api/v1/keys', { token: user.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.apiKeys.map((k: { id: string }) => k.id)).toEqual([created.body.data.apiKey.id]);
    const databaseRead = await api.post('/api/v1/keys', { name: 'db key', permissions: ['database:read'] }, { token: user.token, invalidRequest: true });
    expectError(databaseRead, 400, 'VALIDATION_ERROR');
  });

  it('when a key is updated, regenerated and its usage read, then 200; an unknown key is 404 NOT_FOUND for each', async () => {
    const user = await register();
    await grantPlan(t, user, 'enterprise');
    const id = (await createKey(user)).body.data.apiKey.id as string;
    const updated = await api.put(`/api/v1/keys/${id}`, { name: 'renamed', rateLimitTier: 'enterprise', expiresAt: null }, { token: user.token });
    expect(updated.status).toBe(200);
    expect(updated.body.data.apiKey).toMatchObject({ name: 'renamed', rateLimitTier: 'enterprise', expiresAt: null });
    const usage = await api.get(`/api/v1/keys/${id}/usage?days=7&period=day&limit=10`, { token: user.token });
    expect(usage.status).toBe(200);
    expect(usage.body.data.usage.keyId).toBe(id);
    const regenerated = await api.post(`/api/v1/keys/${id}/regenerate`, undefined, { token: user.token });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.data.oldKeyId).toBe(id);

    expectError(await api.put(`/api/v1/keys/${unknownKey}`, { name: 'x' }, { token: user.token }), 404, 'NOT_FOUND');
    expectError(await api.get(`/api/v1/keys/${unknownKey}/usage`, { token: user.token }), 404, 'NOT_FOUND');
    expectError(await api.post(`/api/v1/keys/${unknownKey}/regenerate`, undefined, { token: user.token }), 404, 'NOT_FOUND');
    expectError(await api.delete(`/api/v1/keys/${unknownKey}`, { token: user.token }), 404, 'NOT_FOUND');
  });

  it('when usage is asked for zero days, then 400 VALIDATION_ERROR and Prism flags the request', async () => {
    const user = await register();
    const id = (await createKey(user)).body.data.apiKey.id as string;
    expectError(await api.get(`/api/v1/keys/${id}/usage?days=0`, { token: user.token, invalidRequest: true }), 400, 'VALIDATION_ERROR');
  });

  it('when a key is revoked, then 200 (again on a second revoke); updating or regenerating it is 409 CONFLICT', async () => {
    const user = await register();
    const id = (await createKey(user)).body.data.apiKey.id as string;
    const revoked = await api.delete(`/api/v1/keys/${id}`, { token: user.token });
    expect(revoked.status).toBe(200);
    const again = await api.delete(`/api/v1/keys/${id}`, { token: user.token });
    expect(again.status).toBe(200);
    expect(again.body.data.revokedAt).toBe(revoked.body.data.revokedAt);
    expectError(await api.put(`/api/v1/keys/${id}`, { name: 'x' }, { token: user.token }), 409, 'CONFLICT');
    expectError(await api.post(`/api/v1/keys/${id}/regenerate`, undefined, { token: user.token }), 409, 'CONFLICT');
  });
});

const operationOf = (operationId: string) => contract.operations.find((operation) => operation.operationId === operationId)!;

describe('SQLite files through prism proxy', () => {
  it('when a SQLite file is uploaded, replaced, refused and listed, then 201, 200, 422 and 200; a JSON body is 415', async () => {
    const user = await register();
    const file = await onSqlite(mkdtempSync(join(tmpdir(), 'quarry-contract-')), 'catalog.db', ['CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT)']);
    const bytes = readFileSync(file);
    const put = (body: Uint8Array, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }, invalidRequest = false) =>
      api.request('PUT', '/api/v1/sqlite-files/catalog.db', undefined, { token: user.token, raw: body, headers, invalidRequest });
    // Prism's proxy re-encodes a binary body as text (stoplightio/prism#1321, #2349), so a real SQLite file reaches
    // the server damaged: 201 and 200 are checked directly against the server, by the same independent validator.
    const upload = operationOf('uploadSqliteFile');
    for (const expected of [201, 200]) {
      const direct = await t.client.request('PUT', '/api/v1/sqlite-files/catalog.db', undefined, { token: user.token, raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
      expect(direct.status).toBe(expected);
      expect([...validator.bodyProblems(upload, direct.status, direct.headers.get('content-type'), direct.body), ...validator.headerProblems(upload, direct.status, direct.headers)]).toEqual([]);
    }
    expectError(await put(Buffer.from('not a database at all')), 422, 'INVALID_SQLITE_FILE');
    expectError(await put(Buffer.from('{"a":1}'), { 'content-type': 'application/json' }, true), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const listed = await api.get('/api/v1/sqlite-files', { token: user.token });
    expect(listed.body.data.files).toEqual([expect.objectContaining({ name: 'catalog.db', sizeBytes: bytes.length })]);
    expect((await api.delete('/api/v1/sqlite-files/catalog.db', { token: user.token })).status).toBe(200);
  });
});

describe('every other operation through prism proxy', () => {
  it('when each remaining operation gets its documented example request, then it answers per contract or is 501 NOT_IMPLEMENTED', async () => {
    const owner = await register(uniqueEmail('owner'));
    await grantPlan(t, owner, 'enterprise');
    // Admin-only operations need an admin: log the admin account in (it may have registered already).
    const adminSession = await api.post('/api/v1/auth/login', { email: adminEmail, password }, fromIp());
    const adminToken: string = adminSession.status === 200 ? adminSession.body.data.tokens.accessToken : (await register(adminEmail)).token;
    await makeAdmin(t, { email: adminEmail });
    const keySecret: string = (await api.post('/api/v1/management/setup', undefined, { token: owner.token })).body.data.secretKey;

    const remaining = contract.operations.filter((operation) => !api.exercised.has(operation.operationId));
    const notImplemented: string[] = [];
    for (const operation of remaining) {
      const { url, body } = contract.exampleRequest(operation);
      const token = operation.schemes.includes('bearerJwt') ? ((operation.spec as Record<string, unknown>)['x-quarry-admin'] === true ? adminToken : owner.token) : keySecret;
      const res = await api.request(operation.method, url, body, { token, allowRemock: true });
      if (!res.remocked) continue;
      // Prism hid the server's answer: it must have been 501, in the error envelope of the `default` response.
      const direct = await t.client.request(operation.method, url, body, { token });
      expect(direct.status, `${operation.operationId}: Prism remocked it, so the server should have said 501`).toBe(501);
      expect(direct.body.error.code).toBe('NOT_IMPLEMENTED');
      expect([
        ...validator.bodyProblems(operation, direct.status, direct.headers.get('content-type'), direct.body),
        ...validator.headerProblems(operation, direct.status, direct.headers),
      ]).toEqual([]);
      notImplemented.push(operation.operationId);
    }
    console.info(`conformance: ${remaining.length - notImplemented.length} further operations answered through the proxy; 501 NOT_IMPLEMENTED (checked directly): ${notImplemented.join(', ') || 'none'}`);
  });

  it(`when the scenario is over, then all ${contract.operations.length} operations of openapi.yaml went through the proxy`, () => {
    const missing = contract.operations.map((operation) => operation.operationId).filter((id) => !api.exercised.has(id));
    expect(missing).toEqual([]);
    const summary = [...api.exercised].map(([id, statuses]) => `${id}: ${[...statuses].join('/')}`);
    console.info(`conformance: ${api.exercised.size} operations exercised through prism proxy\n  ${summary.join('\n  ')}`);
  });
});
