/**
 * Uploaded SQLite files read by every process: two Quarry processes on one PostgreSQL store, one Redis and one index
 * folder, each with its own SQLITE_DATA_DIR (two machines). The first takes the upload and only answers; the second
 * alone syncs, so the sync of the uploaded file runs where the file was never sent. A replacement sent to the first
 * reaches the second: its live searches read the new file and no page cached before is served. Needs PostgreSQL
 * (PG_URL) and Redis (REDIS_URL).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onSqlite } from '../support/seed-databases.js';
import { sendUpload } from '../support/sqlite-uploads.js';
import { freshPostgresDatabase, redisUrl } from '../support/stores.js';

let taker: ServerProcess;
let syncer: ServerProcess;
let dropDatabase: () => Promise<void>;
let dirs: string[] = [];
let owner: TestUser;
let key: TestKey;

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

/** A small shop file whose three products all carry `word` in their names. */
async function shopFile(word: string): Promise<Buffer> {
  const dir = tempDir('quarry-upload-source-');
  return readFileSync(await onSqlite(dir, 'shop.db', [
    'CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL)',
    `INSERT INTO products VALUES (1, '${word} one'), (2, '${word} two'), (3, '${word} three')`,
  ]));
}

async function search(server: ServerProcess, query: string, databaseId: string, live: boolean) {
  const res = await new ApiClient(server.url).post('/api/v1/search', { query, databases: [databaseId], live, limit: 10 }, { token: key.secret });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { results: Array<{ snippet: string }>; databases: Array<{ status: string; source: string; error?: { code: string } }> };
}

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  const shared = {
    DATABASE_URL: database.url, REDIS_URL: redisUrl, TRUST_PROXY: 'true', INDEX_URI: tempDir('quarry-upload-index-'), INDEX_READ_CONSISTENCY_MS: '500',
    JWT_SECRET: randomBytes(32).toString('hex'), API_KEY_PEPPER: randomBytes(32).toString('hex'), CREDENTIALS_KEY: randomBytes(32).toString('base64'),
  };
  // The first process applies the migrations; the second then starts on an up-to-date store.
  taker = await spawnServer({ ...shared, DATA_DIR: tempDir('quarry-process-'), SQLITE_DATA_DIR: tempDir('quarry-sqlite-a-'), INDEX_SYNC: 'false' });
  syncer = await spawnServer({ ...shared, DATA_DIR: tempDir('quarry-process-'), SQLITE_DATA_DIR: tempDir('quarry-sqlite-b-'), INDEX_SYNC: 'true' });
  owner = await registerUser(new ApiClient(taker.url));
  key = await createKey(new ApiClient(taker.url), owner);
}, 300_000);

afterAll(async () => {
  await Promise.all([taker, syncer].filter(Boolean).map((server) => server.stop()));
  await dropDatabase?.();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('an uploaded SQLite file, two processes with their own folders', () => {
  it('when a file is uploaded to one process, then the other syncs and searches it, and a replacement sent to the first is what the other reads next', async () => {
    const upload = await sendUpload(taker.url, owner.token, 'shop.db', await shopFile('lamp'), false);
    expect(upload.status, upload.body).toBe(201);
    const created = await new ApiClient(taker.url).post('/api/v1/databases', { name: 'Shop', engine: 'sqlite', database: 'shop.db', environment: 'test' }, { token: owner.token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const databaseId = created.body.data.database.id as string;

    // The sync ran in the process that never received the file.
    const [products] = await waitForIndex(new ApiClient(syncer.url), owner.token, databaseId);
    expect(products).toMatchObject({ table: 'products', state: 'ready', rows: 3 });
    const listed = await new ApiClient(syncer.url).get('/api/v1/sqlite-files', { token: owner.token });
    expect(listed.body.data.files).toMatchObject([{ name: 'shop.db', sizeBytes: JSON.parse(upload.body).data.file.sizeBytes }]);

    // Both processes search it live; each answer is now in the shared search cache.
    for (const server of [syncer, taker]) {
      const answer = await search(server, 'lamp', databaseId, true);
      expect(answer.databases[0], JSON.stringify(answer)).toMatchObject({ status: 'ok', source: 'live' });
      expect(answer.results).toHaveLength(3);
    }

    const replaced = await sendUpload(taker.url, owner.token, 'shop.db', await shopFile('kettle'), false);
    expect(replaced.status, replaced.body).toBe(200);
    // The other process reads the new file at once: the bus told it, through Redis, the file and its pages changed.
    const kettles = await search(syncer, 'kettle', databaseId, true);
    expect(kettles.databases[0], JSON.stringify(kettles)).toMatchObject({ status: 'ok', source: 'live' });
    expect(kettles.results).toHaveLength(3);
    expect((await search(syncer, 'lamp', databaseId, true)).results).toHaveLength(0);
    // The sync the replacement started, in the other process, leaves the new rows in the index.
    await waitForIndex(new ApiClient(syncer.url), owner.token, databaseId);
    for (const server of [taker, syncer]) {
      for (let deadline = Date.now() + 60_000; ;) {
        const answer = await search(server, 'kettle', databaseId, false);
        if (answer.databases[0]?.source === 'index' && answer.results.length === 3) break;
        expect(Date.now(), JSON.stringify(answer)).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect((await search(server, 'lamp', databaseId, false)).results).toHaveLength(0);
    }
  }, 300_000);
});
