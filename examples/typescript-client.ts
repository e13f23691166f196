/**
 * A first session with Quarry from TypeScript: openapi-fetch typed by the `paths` that openapi-typescript generates
 * from openapi.yaml (`generated/openapi.ts` here; `npx openapi-typescript <quarry>/openapi.json -o quarry.ts` in
 * your project). Every path, body, parameter, answer and error below is checked against the contract by tsc.
 *
 *   npx tsx examples/typescript-client.ts
 *   PG_HOST=127.0.0.1 PG_DATABASE=shop PG_USER=reader PG_PASSWORD=... QUERY=headphones npx tsx examples/typescript-client.ts
 *
 * Settings (environment) as in curl.sh: QUARRY_URL, QUARRY_EMAIL / QUARRY_PASSWORD, EXAMPLE_DIR and SQLITE_FILE (a
 * SQLite file on this machine, uploaded to your own folder on the server; curl.sh creates
 * data/examples/quarry-example.db), PG_HOST / PG_PORT / PG_DATABASE / PG_USER / PG_PASSWORD, QUERY.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/openapi.js';

type CreateDatabaseRequest = components['schemas']['CreateDatabaseRequest'];
type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

const env = process.env;
const baseUrl = env.QUARRY_URL ?? 'http://127.0.0.1:3000';
const email = env.QUARRY_EMAIL ?? `example-${Date.now()}@example.com`;
const password = env.QUARRY_PASSWORD ?? 'correct-horse-42';
const query = env.QUERY ?? 'granite';

/** Stops with the error envelope's stable code: every Quarry error carries one. */
function fail(step: string, error: ErrorEnvelope | undefined, status: number): never {
  throw new Error(`${step}: HTTP ${status} ${error ? `${error.error.code}: ${error.error.message}` : ''}`);
}

// openapi-typescript marks fields with a default as required, so the bodies spell them out (rateLimitTier, ssl, limit, offset).
const database: CreateDatabaseRequest = env.PG_HOST
  ? {
      name: 'PostgreSQL example', engine: 'postgres', host: env.PG_HOST, port: Number(env.PG_PORT ?? 5432),
      database: env.PG_DATABASE ?? 'postgres', username: env.PG_USER ?? 'postgres', password: env.PG_PASSWORD ?? '',
      ssl: false, environment: 'test',
    }
  : { name: 'SQLite example', engine: 'sqlite', database: env.SQLITE_FILE ?? 'quarry-example.db', ssl: false, environment: 'test' };

const anonymous = createClient<paths>({ baseUrl });

// 1. Register, or log in when the account exists: either way the answer carries a JWT.
const registered = await anonymous.POST('/api/v1/auth/register', { body: { email, password, name: 'Example' } });
const session = registered.data ?? (await anonymous.POST('/api/v1/auth/login', { body: { email, password } })).data;
if (!session) fail('register or log in', registered.error, registered.response.status);
const account = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${session.data.tokens.accessToken}` } });

// 2. Mint an API key; the secret is shown only in this answer.
const minted = await account.POST('/api/v1/keys', { body: { name: 'typescript example', environment: 'test', permissions: ['search'], rateLimitTier: 'free' } });
if (!minted.data) fail('create key', minted.error, minted.response.status);
const withKey = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${minted.data.data.secretKey}` } });

// 3. A SQLite file is uploaded to your own folder on the server first (Quarry checks that it is SQLite).
if (database.engine === 'sqlite') {
  const uploaded = await account.PUT('/api/v1/sqlite-files/{fileName}', {
    params: { path: { fileName: database.database } },
    // openapi-typescript types a binary body as string; the file's bytes go out as they are.
    body: readFileSync(join(env.EXAMPLE_DIR ?? './data/examples', database.database)) as unknown as string,
    bodySerializer: (bytes) => bytes,
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (!uploaded.data) fail('upload SQLite file', uploaded.error, uploaded.response.status);
}

// Connect the database: Quarry tests it first, and a failure is a 422 naming the reason (nothing is saved).
const connected = await account.POST('/api/v1/databases', { body: database });
if (!connected.data) fail('connect database', connected.error, connected.response.status);
const databaseId = connected.data.data.database.id;
console.log(`connected ${database.engine} database ${databaseId}`);

// 4. The schema Quarry found: tables, their text columns and full-text indexes.
const schema = await account.GET('/api/v1/databases/{databaseId}/schema', { params: { path: { databaseId } } });
if (!schema.data) fail('read schema', schema.error, schema.response.status);
console.log(JSON.stringify(schema.data.data, null, 2));

// 5. Search with the key.
const search = await withKey.POST('/api/v1/search', { body: { query, databases: [databaseId], limit: 5, offset: 0 } });
if (!search.data) fail('search', search.error, search.response.status);
for (const result of search.data.data.results) console.log(`${result.rank}. ${result.table} ${JSON.stringify(result.primaryKey)}: ${result.snippet}`);
console.log(`${search.data.data.total} matches in ${search.data.data.tookMs} ms; ${search.response.headers.get('x-ratelimit-remaining')} requests left this hour`);

// 6. The key's rate-limit status (this call does not count against the limit).
const status = await withKey.GET('/api/v1/rate-limit/status');
if (!status.data) fail('rate-limit status', status.error, status.response.status);
console.log(`tier ${status.data.data.rateLimit.tier}: ${status.data.data.rateLimit.current.requests} used, ${status.data.data.rateLimit.current.remaining} left`);
