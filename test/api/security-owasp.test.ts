/**
 * OWASP API Top 10 checks that apply to Quarry ("Hostile input"): object-level authorization on every id,
 * function-level authorization, mass assignment, SSRF through connection hosts, SQL injection through search against
 * real PostgreSQL, MariaDB and SQLite tables, oversized and deeply nested bodies, JWT tampering, and excessive data
 * exposure (no secret of any kind in any response of the whole file's traffic).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyModel, DatabaseConnectionModel, UserModel } from '../../src/models/index.js';
import { Contract, type Operation } from '../contract/support/contract.js';
import type { ApiResponse } from '../support/api-client.js';
import { createKey, fromIp, registerUser, uniqueEmail } from '../support/factories.js';
import { HOSTILE_ENV, createTenant, expectEnvelope, liftKeyLimits, type Tenant } from '../support/hostile.js';
import { mysqlConnection, onMysql, onPostgres, onSqlite, postgresConnection } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const contract = new Contract();
const suffix = randomBytes(4).toString('hex');
const pgTable = `sqli_${suffix}`;
const myTable = `sqli_${suffix}`;
const liteFile = `sqli-${suffix}.db`;
const ROWS = [
  [1, 'battery pack', 'spare battery for the drill'],
  [2, 'secret ledger', 'quarterly numbers nobody else may read'],
  [3, 'quiet mouse', 'silent clicks for the night shift'],
] as const;

let t: TestServer;
let alice: Tenant;
let bob: Tenant;
let aliceDbs: { pg: string; my: string; lite: string };
/** Every response of this file, as sent: the excessive-data-exposure scan reads them at the end. */
const seen: { method: string; path: string; status: number; text: string }[] = [];

beforeAll(async () => {
  t = await startTestServer(HOSTILE_ENV);
  const request = t.client.request.bind(t.client);
  t.client.request = async (method, path, body, options) => {
    const res = await request(method, path, body, options);
    seen.push({ method, path, status: res.status, text: `${JSON.stringify(res.body)} ${JSON.stringify([...res.headers])}` });
    return res;
  };
  alice = await createTenant(t, 'alice');
  bob = await createTenant(t, 'bob');

  await onPostgres([
    `CREATE TABLE ${pgTable} (id integer PRIMARY KEY, title text, body text)`,
    `CREATE INDEX ${pgTable}_fts ON ${pgTable} USING GIN (to_tsvector('english', coalesce(title, '') || ' ' || coalesce(body, '')))`,
    `INSERT INTO ${pgTable} VALUES ${ROWS.map(([id, a, b]) => `(${id}, '${a}', '${b}')`).join(', ')}`,
  ]);
  await onMysql([
    `CREATE TABLE ${myTable} (id INT PRIMARY KEY, title TEXT, body TEXT, FULLTEXT KEY ft (title, body)) ENGINE=InnoDB`,
    `INSERT INTO ${myTable} VALUES ${ROWS.map(([id, a, b]) => `(${id}, '${a}', '${b}')`).join(', ')}`,
  ]);
  await onSqlite(join(t.dataDir, 'sqlite', alice.user.id), liteFile, [
    'CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    `INSERT INTO docs VALUES ${ROWS.map(([id, a, b]) => `(${id}, '${a}', '${b}')`).join(', ')}`,
    "CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, content='docs', content_rowid='id')",
    "INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')",
  ]);
  const connect = async (body: Record<string, unknown>) => {
    const res = await t.client.post('/api/v1/databases', body, { token: alice.user.token });
    if (res.status !== 201) throw new Error(`connect failed: ${JSON.stringify(res.body)}`);
    return res.body.data.database.id as string;
  };
  aliceDbs = {
    pg: await connect(postgresConnection({ name: 'pg sqli', tables: [pgTable] })),
    my: await connect(mysqlConnection({ name: 'my sqli', tables: [myTable] })),
    lite: await connect({ name: 'lite sqli', engine: 'sqlite', database: liteFile, environment: 'test' }),
  };
}, 60_000);

afterAll(async () => {
  await onPostgres([`DROP TABLE IF EXISTS ${pgTable}`]).catch(() => undefined);
  await onMysql([`DROP TABLE IF EXISTS ${myTable}`]).catch(() => undefined);
  await t?.stop();
});

const asJwt = (tenant: Tenant) => ({ token: tenant.user.token });
const asKey = (tenant: Tenant) => ({ token: tenant.key.secret });

/** The contract's own example request for an operation, with path ids replaced. */
function exampleFor(operation: Operation, ids: Record<string, string>) {
  const example = contract.exampleRequest(operation);
  let url = operation.path;
  for (const parameter of operation.parameters.filter((p) => p.in === 'path')) url = url.replace(`{${parameter.name}}`, encodeURIComponent(ids[parameter.name] ?? 'unknown'));
  const query = example.url.includes('?') ? example.url.slice(example.url.indexOf('?')) : '';
  return { url: url + query, body: example.body };
}

const send = (operation: Operation, url: string, body: unknown, token: string) =>
  t.client.request(operation.method, url, operation.method === 'GET' ? undefined : body, { token, ...fromIp() });

function credentialFor(operation: Operation, tenant: Tenant): string {
  return operation.schemes.includes('bearerJwt') ? tenant.user.token : tenant.key.secret;
}

/**
 * Operations whose path names an existing object of the caller's. Not: admin operations (403 to everyone else, see
 * API5) and uploadSqliteFile, whose name is a new file in the caller's own folder (another user's names are never
 * reachable, see security-sqlite-files.test.ts).
 */
function namesAnObject(operation: Operation): boolean {
  if ((operation.spec as Record<string, unknown>)['x-quarry-admin'] || operation.operationId === 'uploadSqliteFile') return false;
  return operation.parameters.some((p) => p.in === 'path');
}

describe('API1 object-level authorization', () => {
  const idOperations = contract.operations.filter(namesAnObject);

  it('covers every id-bearing operation of the contract', () => {
    expect(idOperations.map((o) => o.operationId)).toEqual(expect.arrayContaining([
      'updateApiKey', 'revokeApiKey', 'regenerateApiKey', 'getApiKeyUsage', 'getDatabase', 'updateDatabase', 'deleteDatabase',
      'testDatabaseConnection', 'getDatabaseSchema', 'getDatabaseStatus', 'startSemanticIndex', 'getSemanticIndexStatus', 'cancelSemanticIndex',
    ]));
  });

  it.each(idOperations.map((o) => [o.operationId, o] as const))('when bob calls %s on alice\'s id, then 404 exactly like an unknown id', async (_, operation) => {
    const aliceIds = { keyId: alice.key.id, databaseId: alice.databaseId };
    const unknownIds = { keyId: `key_${randomBytes(8).toString('hex')}`, databaseId: `db_${randomBytes(8).toString('hex')}` };
    const foreign = exampleFor(operation, aliceIds);
    const unknown = exampleFor(operation, unknownIds);
    const token = credentialFor(operation, bob);
    const a = await send(operation, foreign.url, foreign.body, token);
    const b = await send(operation, unknown.url, unknown.body, token);
    expect(a.status, JSON.stringify(a.body)).toBe(404);
    expect(b.status).toBe(404);
    expect(a.body.error.code).toBe(b.body.error.code);
    expect(a.body.error.message.replace(aliceIds.keyId, 'ID').replace(aliceIds.databaseId, 'ID'))
      .toBe(b.body.error.message.replace(unknownIds.keyId, 'ID').replace(unknownIds.databaseId, 'ID'));
    t.assertContract();
  });

  it('when bob has tried every operation on alice\'s ids, then alice\'s key and database are untouched', async () => {
    const keys = await t.client.get('/api/v1/keys', asJwt(alice));
    expect(keys.body.data.apiKeys.find((k: { id: string }) => k.id === alice.key.id)).toMatchObject({ isActive: true, name: 'alice key' });
    const db = await t.client.get(`/api/v1/databases/${alice.databaseId}`, asJwt(alice));
    expect(db.status).toBe(200);
    expect(db.body.data.database.name).toBe('alice notes');
    expect((await t.client.get('/api/v1/rate-limit/status', asKey(alice))).status).toBe(200);
  });

  it('when bob searches naming alice\'s database id, then 404 same as an unknown id, and no row of alice\'s leaks', async () => {
    const foreign = await t.client.post('/api/v1/search', { query: 'battery', databases: [alice.databaseId] }, asKey(bob));
    const unknown = await t.client.post('/api/v1/search', { query: 'battery', databases: [`db_${randomBytes(8).toString('hex')}`] }, asKey(bob));
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body.error.code).toBe(unknown.body.error.code);
    const all = await t.client.post('/api/v1/search', { query: 'battery secret' }, asKey(bob));
    expect(all.status).toBe(200);
    for (const result of all.body.data.results) expect(result.databaseId).toBe(bob.databaseId);
    expect(JSON.stringify(all.body)).not.toContain(alice.databaseId);
  });
});

describe('NUL bytes reaching the store (found by the fuzzer: each was a 500)', () => {
  const idOperations = contract.operations.filter(namesAnObject);
  it.each(idOperations.map((o) => [o.operationId, o] as const))('when %s names an id holding NUL, then 404 like any unknown id', async (_, operation) => {
    const example = exampleFor(operation, { keyId: 'key_a\u0000b', databaseId: 'db_a\u0000b' });
    const res = await send(operation, example.url, example.body, credentialFor(operation, alice));
    expect(res.status, JSON.stringify(res.body)).toBe(404);
  });

  it('when a login email holds NUL, then 400 or 401, never a 500', async () => {
    const res = await t.client.post('/api/v1/auth/login', { email: '\u0000', password: 'correct-horse-42' }, fromIp());
    expect([400, 401]).toContain(res.status);
  });

  it('when a suggestion prefix holds NUL, then 200', async () => {
    const res = await t.client.get('/api/v1/search/suggestions?q=%00batt', asKey(alice));
    expect(res.status).toBe(200);
  });

  it.each(['GET', 'DELETE'])('when %s semantic-index names a table holding NUL, then 404', async (method) => {
    const res = await t.client.request(method, `/api/v1/databases/${alice.databaseId}/semantic-index?table=%00`, undefined, asJwt(alice));
    expect(res.status).toBe(404);
  });
});

describe('API5 function-level authorization', () => {
  const adminOperations = contract.operations.filter((o) => (o.spec as Record<string, unknown>)['x-quarry-admin']);
  it.each(adminOperations.map((o) => [o.operationId, o] as const))('when a user calls the admin-only %s, then 403 ADMIN_REQUIRED', async (_, operation) => {
    const example = exampleFor(operation, {});
    const res = await send(operation, example.url, example.body, credentialFor(operation, alice));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ADMIN_REQUIRED');
  });

  it('covers the admin operations of the contract', () => expect(adminOperations.length).toBeGreaterThanOrEqual(3));

  const permissionOperations = contract.operations.filter((o) => (o.spec as Record<string, unknown>)['x-quarry-permission']);
  it.each(permissionOperations.map((o) => [o.operationId, o] as const))('when a key without the permission calls %s, then 403 INSUFFICIENT_PERMISSIONS', async (_, operation) => {
    const needed = (operation.spec as Record<string, unknown>)['x-quarry-permission'] as string;
    const other = needed === 'search' ? 'analytics' : 'search';
    const key = await createKey(t.client, bob.user, { name: `only ${other}`, permissions: [other as 'search'], rateLimitTier: 'enterprise' });
    const example = exampleFor(operation, {});
    const res = await send(operation, example.url, example.body, key.secret);
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
  });
});

describe('API3 mass assignment', () => {
  const privileged = { role: 'admin', id: 'usr_evil', userId: 'usr_evil', usageCount: 0, isActive: true, revokedAt: null, status: 'connected', passwordHash: '$argon2id$x', secretHash: 'ab', passwordEncrypted: 'v1:x', createdAt: '2000-01-01T00:00:00.000Z', tier: 'enterprise' };

  it.each(Object.entries(privileged))('when register carries %s, then 400 and no account is made', async (field, value) => {
    const email = uniqueEmail('mass');
    const res = await t.client.post('/api/v1/auth/register', { email, password: 'correct-horse-42', name: 'M', [field]: value }, fromIp());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect((await t.client.post('/api/v1/auth/login', { email, password: 'correct-horse-42' }, fromIp())).status).toBe(401);
  });

  it.each(Object.entries(privileged))('when a profile update carries %s, then 400 and the profile is unchanged', async (field, value) => {
    const before = await t.client.get('/api/v1/auth/profile', asJwt(alice));
    const res = await t.client.put('/api/v1/auth/profile', { name: 'Changed', [field]: value }, asJwt(alice));
    expect(res.status).toBe(400);
    expect((await t.client.get('/api/v1/auth/profile', asJwt(alice))).body.data).toEqual(before.body.data);
  });

  it.each(Object.entries(privileged))('when a key creation or update carries %s, then 400 and nothing changes', async (field, value) => {
    const before = await t.client.get('/api/v1/keys', asJwt(alice));
    const created = await t.client.post('/api/v1/keys', { name: 'mass', environment: 'test', permissions: ['search'], [field]: value }, asJwt(alice));
    expect(created.status).toBe(400);
    const updated = await t.client.put(`/api/v1/keys/${alice.key.id}`, { name: 'renamed', [field]: value }, asJwt(alice));
    expect(updated.status).toBe(400);
    const after = await t.client.get('/api/v1/keys', asJwt(alice));
    expect(after.body.data.apiKeys).toEqual(before.body.data.apiKeys);
  });

  it.each(Object.entries(privileged))('when a database creation or update carries %s, then 400 and nothing changes', async (field, value) => {
    const before = await t.client.get(`/api/v1/databases/${alice.databaseId}`, asJwt(alice));
    const created = await t.client.post('/api/v1/databases', { name: 'mass', engine: 'sqlite', database: liteFile, [field]: value }, asJwt(alice));
    expect(created.status).toBe(400);
    const updated = await t.client.put(`/api/v1/databases/${alice.databaseId}`, { name: 'renamed', [field]: value }, asJwt(alice));
    expect(updated.status).toBe(400);
    const after = await t.client.get(`/api/v1/databases/${alice.databaseId}`, asJwt(alice));
    expect(after.body.data.database).toEqual(before.body.data.database);
  });
});

describe('API7 SSRF through connection hosts', () => {
  const hosts = [
    '169.254.169.254', 'metadata.google.internal', 'metadata.google.internal.', '[::ffff:169.254.169.254]', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe',
    '0.0.0.0', '2852039166', '0251.0376.0251.0376', '0xa9fea9fe', '0xa9.0xfe.0xa9.0xfe', '169.254.1', '169.254.169.254.', 'fe80::1', '[fe80::1]',
    '100.100.100.200', 'fd00:ec2::254', '[fd00:ec2::254]', '169.254.0.1',
  ];
  it.each(hosts)('when a connection is created with host %s, then 400 HOST_NOT_ALLOWED and nothing is saved', async (host) => {
    const before = (await t.client.get('/api/v1/databases', asJwt(bob))).body.data.total;
    const res = await t.client.post('/api/v1/databases', postgresConnection({ host, name: 'ssrf' }), asJwt(bob));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('HOST_NOT_ALLOWED');
    expect((await t.client.get('/api/v1/databases', asJwt(bob))).body.data.total).toBe(before);
  });

  it.each(['169.254.169.254', '2852039166', '[::ffff:169.254.169.254]'])('when a connection is updated to host %s, then 400 HOST_NOT_ALLOWED and the host is kept', async (host) => {
    const res = await t.client.put(`/api/v1/databases/${aliceDbs.pg}`, { host }, asJwt(alice));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('HOST_NOT_ALLOWED');
    expect((await t.client.get(`/api/v1/databases/${aliceDbs.pg}`, asJwt(alice))).body.data.database.host).toBe(postgresConnection().host);
  });

  // A DNS name resolving to a link-local or metadata address is refused by the same check after resolution; the
  // unit tests (test/unit/connectors/host-policy.test.ts) drive it with a fake resolver, which an API test cannot.
});

describe('API8 SQL injection through search', () => {
  const injections = [
    "' OR 1=1 --", "'; DROP TABLE docs; --", `"; DROP TABLE ${pgTable}; --`, "\\'", "\\", "' UNION SELECT password_hash FROM users --",
    "battery' OR '1'='1", 'battery") OR ("1"="1', "1; SELECT pg_sleep(5)", "SLEEP(5)#", "battery/**/OR/**/1=1", "%' AND 1=1 AND '%'='",
    'battery:* | !battery', "!!!& | <-> :*", "title:battery OR body:*", 'NEAR(battery quiet, 0) AND * OR ^', '+battery -* @ ~ > < ( ) "',
    'battery OR OR OR "" () () *', '"*"', "'' ''", 'ＢＡＴＴＥＲＹ', '\u0000 OR 1=1', "battery\\' OR 1=1 --", 'a'.repeat(2000),
  ];
  const rowsOf = (text: string) => ROWS.filter(([, a, b]) => {
    const words = text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]{2,}/gu) ?? [];
    return words.some((w) => `${a} ${b}`.includes(w));
  });

  it.each(['natural', 'boolean'])('when %s queries are injection attempts, then no 500, no database errors, and only rows holding a query word come back', async (searchMode) => {
    for (const query of injections) {
      const res = await t.client.post('/api/v1/search', { query, searchMode, databases: Object.values(aliceDbs), limit: 100 }, asKey(alice));
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
      if (res.status === 400) {
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        continue;
      }
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.databases.map((d: { status: string }) => d.status), query).toEqual(['ok', 'ok', 'ok']);
      const possible = rowsOf(query).map(([id]) => id);
      for (const result of res.body.data.results) {
        expect(possible, `${query} found ${JSON.stringify(result.fields)}`).toContain(Number(result.fields.id));
      }
      expect(res.body.data.results.length).toBeLessThanOrEqual(possible.length * 3);
    }
    t.assertContract();
  }, 60_000);

  it('when the injections are over, then every table is still there with its rows', async () => {
    const res = await t.client.post('/api/v1/search', { query: 'battery', databases: Object.values(aliceDbs) }, asKey(alice));
    expect(res.status).toBe(200);
    expect(res.body.data.databases.map((d: { status: string; matches?: number }) => d.status)).toEqual(['ok', 'ok', 'ok']);
    expect(new Set(res.body.data.results.map((r: { databaseId: string }) => r.databaseId))).toEqual(new Set(Object.values(aliceDbs)));
    for (const id of Object.values(aliceDbs)) {
      const schema = await t.client.get(`/api/v1/databases/${id}/schema?refresh=true`, asJwt(alice));
      expect(schema.body.data.tables.length).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('API4 oversized and deeply nested bodies', () => {
  const raw = (text: string, headers: Record<string, string> = {}) =>
    t.client.request('POST', '/api/v1/search', undefined, { token: alice.key.secret, raw: text, headers: { 'content-type': 'application/json', ...headers } });

  it('when the body exceeds BODY_LIMIT, then 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await raw(JSON.stringify({ query: 'x'.repeat(1_048_576 + 10) }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['10,000 levels of arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['10,000 levels of objects', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
    ['100,000 levels of arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['a deeply nested search field', `{"query":"battery","filters":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`],
  ])('when the body is %s, then 400 or 413 and the server stays responsive', async (_, text) => {
    const started = Date.now();
    const res = await raw(text);
    expect([400, 413]).toContain(res.status);
    expectEnvelope(res, text.slice(0, 40));
    const health = await t.client.get('/health');
    expect(health.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    t.assertContract();
  });

  it('when an oversized body is streamed without Content-Length, then 413 too', async () => {
    // node:http with its own connection: the upload the server cuts off must not share the test client's pool.
    const url = new URL('/api/v1/search', t.server.url);
    const outcome = await new Promise<{ status: number; body: string } | Error>((resolve) => {
      const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.key.secret}`, 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (part: string) => (body += part));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', resolve);
      });
      req.on('error', resolve);
      req.write('{"query":"');
      const chunk = 'x'.repeat(65_536);
      let written = 0;
      const pump = () => {
        while (written < 24) {
          written += 1;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end('"}');
      };
      pump();
    });
    // The server answers 413 or cuts the upload; never a 5xx.
    if (!(outcome instanceof Error)) {
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    }
    expect((await t.client.get('/health')).status).toBe(200);
  });
});

describe('API2 JWT tampering', () => {
  const secret = new TextEncoder().encode(HOSTILE_ENV.JWT_SECRET);
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = () => {
    const { sub, sid, typ } = decodeJwt(alice.user.token) as { sub: string; sid: string; typ: string };
    return { sub, sid, typ };
  };
  const sign = (alg: string, options: { iss?: string; aud?: string; exp?: number; typ?: string; key?: Uint8Array } = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const { sub, sid, typ } = claims();
    return new SignJWT({ typ: options.typ ?? typ, sid })
      .setProtectedHeader({ alg })
      .setSubject(sub)
      .setIssuer(options.iss ?? 'quarry')
      .setAudience(options.aud ?? 'quarry-api')
      .setIssuedAt(now - 10)
      .setExpirationTime(options.exp ?? now + 600)
      .sign(options.key ?? secret);
  };

  it('when the token is re-signed with HS256 and the right claims, then it is accepted (the forgeries below are realistic)', async () => {
    expect((await t.client.get('/api/v1/auth/profile', { token: await sign('HS256') })).status).toBe(200);
  });

  it.each([
    ['alg none', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims(), iss: 'quarry', aud: 'quarry-api', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600 })}.`],
    ['alg none with the original signature', async () => { const [, payload, signature] = alice.user.token.split('.'); return `${b64({ alg: 'none' })}.${payload}.${signature}`; }],
    ['alg HS512', () => sign('HS512', { key: new TextEncoder().encode(HOSTILE_ENV.JWT_SECRET.repeat(2)) })],
    ['alg HS512 with the server secret', () => sign('HS512')],
    ['the wrong issuer', () => sign('HS256', { iss: 'evil' })],
    ['the wrong audience', () => sign('HS256', { aud: 'other-api' })],
    ['an expired token', () => sign('HS256', { exp: Math.floor(Date.now() / 1000) - 60 })],
    ['another secret', () => sign('HS256', { key: new TextEncoder().encode('x'.repeat(40)) })],
    ['a refresh token used as access', () => sign('HS256', { typ: 'refresh' })],
    ['a modified payload', async () => { const [h, , s] = alice.user.token.split('.'); return `${h}.${b64({ ...claims(), sub: bob.user.id, iss: 'quarry', aud: 'quarry-api', exp: 9e9, iat: 1 })}.${s}`; }],
  ])('when the JWT has %s, then 401', async (_, forge) => {
    const res = await t.client.get('/api/v1/auth/profile', { token: await forge() });
    expect(res.status).toBe(401);
    expect(['INVALID_TOKEN', 'TOKEN_EXPIRED']).toContain(res.body.error.code);
    t.assertContract();
  });
});

describe('API3 excessive data exposure', () => {
  it('when a full scenario has run, then no response holds a hash, the pepper, a secret, an encrypted password or a full key secret', async () => {
    // The scenario: every GET of the contract for alice, with JWT or key, plus a login, a refresh, a regeneration.
    for (const operation of contract.operations.filter((o) => o.method === 'GET')) {
      const example = exampleFor(operation, { keyId: alice.key.id, databaseId: alice.databaseId });
      await send(operation, example.url, undefined, credentialFor(operation, alice));
    }
    const login = await t.client.post('/api/v1/auth/login', { email: alice.user.email, password: alice.user.password }, fromIp());
    expect(login.status).toBe(200);
    await t.client.post('/api/v1/auth/refresh', { refreshToken: login.body.data.tokens.refreshToken }, fromIp());
    const extra = await createKey(t.client, alice.user, { name: 'to regenerate' });
    const regenerated = await t.client.post(`/api/v1/keys/${extra.id}/regenerate`, undefined, asJwt(alice));
    expect(regenerated.status).toBe(200);
    await liftKeyLimits(extra.id);

    const users = await UserModel.findAll();
    const keys = await ApiKeyModel.findAll();
    const connections = await DatabaseConnectionModel.findAll();
    const forbidden = [
      HOSTILE_ENV.JWT_SECRET, HOSTILE_ENV.API_KEY_PEPPER, HOSTILE_ENV.CREDENTIALS_KEY, alice.user.password,
      ...users.map((u) => u.passwordHash), ...keys.map((k) => k.secretHash),
      ...connections.flatMap((c) => (c.passwordEncrypted ? [c.passwordEncrypted] : [])),
    ].filter((s) => s && s.length >= 8);
    const fieldNames = /"(passwordHash|password_hash|secretHash|secret_hash|passwordEncrypted|password_encrypted|pepper)"/;
    const secrets = [alice.key.secret, bob.key.secret, extra.secret, regenerated.body.data.secretKey];
    const mayShowSecret = (entry: (typeof seen)[number]) =>
      entry.method === 'POST' && (/^\/api\/v1\/keys(\/[^/]+\/regenerate)?$/.test(entry.path) || entry.path === '/api/v1/management/setup');

    expect(seen.length).toBeGreaterThan(200);
    for (const entry of seen) {
      const where = `${entry.method} ${entry.path} ${entry.status}`;
      for (const value of forbidden) expect(entry.text.includes(value), `${where} holds a secret`).toBe(false);
      expect(entry.text, where).not.toMatch(fieldNames);
      expect(entry.text, where).not.toMatch(/\$argon2|\$2[aby]\$/);
      if (!mayShowSecret(entry)) for (const secret of secrets) expect(entry.text.includes(secret), `${where} shows a key secret`).toBe(false);
    }
    t.assertContract();
  }, 60_000);
});
