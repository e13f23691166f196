/**
 * One search index shared by several Quarry processes: two processes that only answer (INDEX_SYNC=false)
 * and a third that syncs, on one PostgreSQL store and one INDEX_URI folder. While the third writes the index, the
 * two keep answering; once a sync is done, both see its rows within the read-consistency interval. Needs PostgreSQL
 * (PG_URL); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { operatorCommand } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { freshPostgresDatabase } from '../support/stores.js';

const ROWS = 20_000;
/** The readers' read-consistency interval: how long after a sync they may still answer from the version before. */
const CONSISTENCY_MS = 500;

let readers: ServerProcess[] = [];
let syncer: ServerProcess;
let dropDatabase: () => Promise<void>;
let dirs: string[] = [];
let sqliteDir: string;
let owner: TestUser;
let key: TestKey;

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  const indexDir = mkdtempSync(join(tmpdir(), 'quarry-shared-index-'));
  sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-shared-sqlite-'));
  dirs = [indexDir, sqliteDir];
  const secrets = {
    JWT_SECRET: randomBytes(32).toString('hex'),
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    CREDENTIALS_KEY: randomBytes(32).toString('base64'),
  };
  const shared = {
    DATABASE_URL: database.url,
    INDEX_URI: indexDir,
    INDEX_READ_CONSISTENCY_MS: String(CONSISTENCY_MS),
    SQLITE_DATA_DIR: sqliteDir,
    ...secrets,
    TRUST_PROXY: 'true',
  };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-process-'));
    dirs.push(dir);
    return dir;
  };
  // The first process applies the migrations; the others then start on an up-to-date store.
  readers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'false' }));
  readers.push(await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'false' }));
  syncer = await spawnServer({ ...shared, DATA_DIR: dataDir(), INDEX_SYNC: 'true' });

  const client = new ApiClient(readers[0]!.url);
  owner = await registerUser(client);
  await operatorCommand({ DATABASE_URL: database.url, ...secrets }, ['plan', owner.email, 'enterprise']);
  key = await createKey(client, owner, { rateLimitTier: 'enterprise' });
  // Each account connects only the SQLite files of its own folder.
  await onSqlite(join(sqliteDir, owner.id), 'shop.db', [
    'CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       INSERT INTO items SELECT i, 'item ' || i || ' of the ' || CASE i % 3 WHEN 0 THEN 'garden' WHEN 1 THEN 'kitchen' ELSE 'workshop' END || ' range' FROM n`,
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([...readers, syncer].filter(Boolean).map((server) => server.stop()));
  await dropDatabase?.();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('one index, two answering processes and one syncing', () => {
  it('when the third process syncs a table, then the other two answer throughout and then find its rows from the index', async () => {
    const [a, b] = readers.map((reader) => new ApiClient(reader.url));
    const created = await a!.post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, { token: owner.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const databaseId = created.body.data.database.id as string;

    // While the sync runs elsewhere, both answering processes serve every search (live until the table is ready).
    const sources = new Set<string>();
    let answered = 0;
    for (;;) {
      const state = (await b!.get(`/api/v1/databases/${databaseId}/index/tables/items`, { token: owner.token })).body.data;
      for (const client of [a!, b!]) {
        const res = await client.post('/api/v1/search', { query: 'garden', databases: [databaseId], limit: 5 }, { token: key.secret });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        sources.add(res.body.data.databases[0].source);
        answered += 1;
      }
      if (state.state === 'ready') break;
      expect(state.job?.status).not.toBe('failed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answered).toBeGreaterThan(1);
    const [items] = await waitForIndex(a!, owner.token, databaseId);
    expect(items).toMatchObject({ state: 'ready', rows: ROWS });

    await new Promise((resolve) => setTimeout(resolve, CONSISTENCY_MS + 200));
    for (const client of [a!, b!]) {
      const res = await client.post('/api/v1/search', { query: 'garden', databases: [databaseId], limit: 5, exactTotal: true }, { token: key.secret });
      expect(res.status).toBe(200);
      expect(res.body.data.databases[0].source, JSON.stringify(res.body.data.liveTables)).toBe('index');
      expect(res.body.data.total).toBe(1100); // counted (exactTotal) up to the cap: about a third of 20,000 rows match
      expect(res.body.data.totalIsEstimate).toBe(true);
      expect(res.body.data.results[0].fields.title).toContain('garden');
    }
  }, 180_000);

  it('when a row changes and a reader asks for a sync, then the syncing process writes it and both readers see it', async () => {
    const [a, b] = readers.map((reader) => new ApiClient(reader.url));
    const databaseId = (await a!.get('/api/v1/databases', { token: owner.token })).body.data.databases[0].id as string;
    await onSqlite(join(sqliteDir, owner.id), 'shop.db', ["UPDATE items SET title = 'a unique aubergine planter' WHERE id = 7"]);
    const sync = await b!.post(`/api/v1/databases/${databaseId}/index/sync`, {}, { token: owner.token });
    expect(sync.status).toBe(202);
    const [items] = await waitForIndex(b!, owner.token, databaseId);
    expect(items!.job).toMatchObject({ status: 'done', rowsWritten: 1, rowsSkipped: ROWS - 1 });

    await new Promise((resolve) => setTimeout(resolve, CONSISTENCY_MS + 200));
    for (const client of [a!, b!]) {
      const res = await client.post('/api/v1/search', { query: 'aubergine', databases: [databaseId] }, { token: key.secret });
      expect(res.body.data.results.map((r: { primaryKey: { id: number } }) => r.primaryKey.id)).toEqual([7]);
    }
  }, 180_000);
});
