/**
 * Old versions of the index are cleaned up on a schedule, and getDatabaseIndex reports the size of
 * the account's index. Every sync writes new versions of its space; INDEX_KEEP_VERSIONS_MS (short here) says how long
 * an older one stays for readers of other processes.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spaceName } from '../../src/search-index/index-store.js';
import { registerUser, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const KEEP_MS = 1000;

let t: TestServer;
let owner: TestUser;
let db: string;

const as = () => ({ token: owner.token });
const onSource = (statements: string[]) => onSqlite(join(t.dataDir, 'sqlite', owner.id), 'notes.db', statements);
const manifests = () => readdirSync(join(t.dataDir, 'index', `${spaceName(owner.id, 'test')}.lance`, '_versions')).filter((f) => f.endsWith('.manifest'));
/** The space's versions as its folder holds them (one manifest each). */
const versions = () => manifests().length;
/** The newest version's number: manifests are named u64::MAX minus it, so it counts every version written, removed or not. */
const newestVersion = () => manifests().map((f) => 18446744073709551615n - BigInt(f.replace('.manifest', ''))).reduce((a, b) => (a > b ? a : b), 0n);

beforeAll(async () => {
  t = await startTestServer({ INDEX_KEEP_VERSIONS_MS: String(KEEP_MS), INDEX_READ_CONSISTENCY_MS: '0', SEARCH_TIMEOUT_MS: '500' });
  owner = await registerUser(t.client);
  await onSource([
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) INSERT INTO notes SELECT i, 'note ' || i || ' about the garden' FROM n`,
  ]);
  const created = await t.client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'test' }, as());
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  db = created.body.data.database.id;
  await waitForIndex(t.client, owner.token, db);
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe('old versions of the index', () => {
  it('when syncs have written several versions, then the schedule removes those older than INDEX_KEEP_VERSIONS_MS, and the rows stay', async () => {
    const before = newestVersion();
    for (let round = 1; round <= 3; round++) {
      await onSource([`UPDATE notes SET body = 'note ' || id || ' rewritten in round ${round}'`]);
      expect((await t.client.post(`/api/v1/databases/${db}/index/sync`, {}, as())).status).toBe(202);
      await waitForIndex(t.client, owner.token, db);
    }
    // Each sync wrote at least one version (the schedule may already have removed some of them: it runs meanwhile).
    const written = Number(newestVersion() - before);
    expect(written).toBeGreaterThanOrEqual(3);
    // The schedule runs every INDEX_KEEP_VERSIONS_MS in a syncing process: wait for a round after the last write.
    const deadline = Date.now() + 60_000;
    while (versions() > 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(versions(), `versions left of ${written}`).toBeLessThanOrEqual(2);
    const index = await t.client.get(`/api/v1/databases/${db}/index`, as());
    expect(index.body.data.tables[0]).toMatchObject({ table: 'notes', rows: 300 });
  }, 180_000);
});

describe('getDatabaseIndex', () => {
  it("when the connection's tables are indexed, then it reports the rows and bytes of the account's index in its environment", async () => {
    const index = await t.client.get(`/api/v1/databases/${db}/index`, as());
    expect(index.status).toBe(200);
    expect(index.body.data.accountIndex).toEqual({ environment: 'test', rows: 300, bytes: expect.any(Number) });
    expect(index.body.data.accountIndex.bytes).toBeGreaterThan(300 * 'note 1 about the garden'.length);
  });
});
