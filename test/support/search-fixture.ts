/**
 * One small SQLite table, connected and indexed by a pro account with a pro key: the setting of the search tests
 * that compare rankings (relaxation, feedback, expansion) on a handful of hand-written rows.
 */
import { join } from 'node:path';
import type { ApiResponse } from './api-client.js';
import type { TestServer } from './test-server.js';
import { createKey, registerUser, type TestKey, type TestUser } from './factories.js';
import { waitForIndex } from './indexing.js';
import { grantPlan } from './operator.js';
import { onSqlite } from './seed-databases.js';

export interface SearchFixture {
  owner: TestUser;
  key: TestKey;
  databaseId: string;
  /** searchDatabases over the fixture's database with the pro key. */
  search(body: Record<string, unknown>): Promise<ApiResponse<any>>;
}

/** The primary keys (`id`) of an answer's results, in order. */
export const resultIds = (res: { body: { data: { results: Array<{ primaryKey: { id: number } }> } } }): number[] =>
  res.body.data.results.map((r) => r.primaryKey.id);

/** Writes `statements` into `<file>` of a new pro account's folder, connects it as `name` and waits for its index. */
export async function indexedSqliteFixture(t: TestServer, file: string, name: string, statements: string[]): Promise<SearchFixture> {
  const owner = await registerUser(t.client);
  await grantPlan(t, owner, 'pro');
  const key = await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onSqlite(join(t.dataDir, 'sqlite', owner.id), file, statements);
  const created = await t.client.post('/api/v1/databases', { name, engine: 'sqlite', database: file, environment: 'test' }, { token: owner.token });
  if (created.status !== 201) throw new Error(`createDatabase answered ${created.status}: ${JSON.stringify(created.body)}`);
  const databaseId = created.body.data.database.id as string;
  await waitForIndex(t.client, owner.token, databaseId);
  return {
    owner, key, databaseId,
    search: (body) => t.client.post('/api/v1/search', { databases: [databaseId], ...body }, { token: key.secret }),
  };
}
