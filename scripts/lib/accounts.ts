import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { ApiClient } from './api-client.js';

type CreateKeyRequest = components['schemas']['CreateKeyRequest'];

export interface TestUser {
  id: string;
  email: string;
  password: string;
  token: string;
  refreshToken: string;
}

export interface TestKey {
  id: string;
  secret: string;
}

export const uniqueEmail = (label = 'user') => `${label}-${randomBytes(4).toString('hex')}@example.com`;

/** A random client address: the test server trusts X-Forwarded-For, so each caller gets its own per-IP budget. */
export const randomIp = () => `10.${[0, 0, 0].map(() => randomBytes(1)[0]).join('.')}`;
export const fromIp = (ip = randomIp()) => ({ headers: { 'X-Forwarded-For': ip } });

/** Registers a new user from a random client IP (registration allows 5 per hour per IP). */
export async function registerUser(client: ApiClient, overrides: Partial<{ email: string; password: string; name: string }> = {}): Promise<TestUser> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? 'correct-horse-42';
  const response = await client.post('/api/v1/auth/register', { email, password, name: overrides.name ?? 'Test User' }, fromIp());
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  const { user, tokens } = response.body.data;
  return { id: user.id, email, password, token: tokens.accessToken, refreshToken: tokens.refreshToken };
}

export async function createKey(client: ApiClient, user: TestUser, overrides: Partial<CreateKeyRequest> = {}): Promise<TestKey> {
  const response = await client.post('/api/v1/keys', { name: 'test key', environment: 'test', permissions: ['search', 'analytics'], ...overrides }, { token: user.token });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.data.apiKey.id, secret: response.body.data.secretKey };
}
