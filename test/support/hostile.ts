/**
 * Shared pieces of the hostile-input tests (test/api/fuzz-*.test.ts, test/api/security-*.test.ts): a tenant with a
 * JWT, an enterprise API key without rate limits and a connected SQLite database; the checks every answer to a
 * hostile request must pass.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ApiKeyModel } from '../../src/models/index.js';
import type { ApiResponse } from './api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from './factories.js';
import { grantPlan } from './operator.js';
import { onSqlite } from './seed-databases.js';
import type { TestServer } from './test-server.js';

/** Fixed secrets, so the tests can look for them in responses and forge tokens. */
export const HOSTILE_ENV = {
  JWT_SECRET: 'hostile-tests-jwt-secret-0123456789abcdef',
  API_KEY_PEPPER: 'hostile-tests-pepper-0123456789abcdef-xyz',
  CREDENTIALS_KEY: Buffer.alloc(32, 7).toString('base64'),
  // Semantic indexing fails fast instead of loading a model: the fuzzer only cares that requests are answered.
  EMBEDDINGS_PROVIDER: 'remote',
  EMBEDDINGS_URL: 'http://127.0.0.1:9/v1',
  EMBEDDINGS_MODEL: 'none',
  SEARCH_TIMEOUT_MS: '2000',
};

/** What bench.ts's liftKeyLimits does, through the store models (the server under test shares them). */
export async function liftKeyLimits(keyId: string): Promise<void> {
  await ApiKeyModel.update({ customLimits: { requestsPerHour: 1e9, burstLimit: 1e9, concurrentConnections: 1000 } }, { where: { id: keyId } });
}

export interface Tenant {
  user: TestUser;
  key: TestKey;
  /** A connected SQLite database of this tenant. */
  databaseId: string;
}

/** A user with an unlimited enterprise key (all permissions) and one connected SQLite database. */
export async function createTenant(t: TestServer, label = 'tenant', overrides: { email?: string } = {}): Promise<Tenant> {
  // A password of its own (not the contract's example one), so a scan for it in responses means something.
  const user = await registerUser(t.client, { password: `pw-${randomBytes(8).toString('hex')}-9`, ...overrides });
  await grantPlan(t, user, 'enterprise');
  const key = await createKey(t.client, user, { name: `${label} key`, rateLimitTier: 'enterprise', environment: 'test', permissions: ['search', 'analytics', 'admin'] });
  await liftKeyLimits(key.id);
  const file = `${label}-${randomBytes(4).toString('hex')}.db`;
  await onSqlite(join(t.dataDir, 'sqlite', user.id), file, [
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    "INSERT INTO notes (title, body) VALUES ('battery pack', 'order more battery packs'), ('secret plans', 'only for the owner')",
  ]);
  const res = await t.client.post('/api/v1/databases', { name: `${label} notes`, engine: 'sqlite', database: file, environment: 'test' }, { token: user.token });
  if (res.status !== 201) throw new Error(`database creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { user, key, databaseId: res.body.data.database.id };
}

/** Success or error envelope, per README: `{ success, data|error, meta }`. */
export function expectEnvelope(res: ApiResponse, context: string, rawSuccess = false): void {
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('json')) return; // docs page, YAML, CSV export
  if (rawSuccess && res.status < 300) return; // the contract itself as JSON
  const body = res.body as Record<string, any> | null;
  expect(body, context).toBeTypeOf('object');
  if (res.status === 204) return;
  expect(typeof body?.success, context).toBe('boolean');
  if (body?.success) {
    expect(body, context).toHaveProperty('data');
  } else {
    expect(typeof body?.error?.code, context).toBe('string');
    expect(typeof body?.error?.message, context).toBe('string');
  }
  expect(typeof body?.meta?.requestId, context).toBe('string');
}
