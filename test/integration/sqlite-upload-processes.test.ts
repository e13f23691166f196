/**
 * The SQLite folder limit held across processes: two Quarry processes on one PostgreSQL store and one SQLITE_DATA_DIR
 * take uploads of the same account at once, and together they keep no more than the plan's folder allows. Needs
 * PostgreSQL (PG_URL); a missing service fails the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { registerUser } from '../support/factories.js';
import { onSqlite } from '../support/seed-databases.js';
import { sendUpload } from '../support/sqlite-uploads.js';
import { freshPostgresDatabase } from '../support/stores.js';

const FREE_FOLDER_BYTES = 150 * 1024 * 1024;

let servers: ServerProcess[] = [];
let dropDatabase: () => Promise<void>;
let dirs: string[] = [];
let sqliteDir: string;

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  sqliteDir = mkdtempSync(join(tmpdir(), 'quarry-shared-sqlite-'));
  dirs = [sqliteDir];
  const shared = {
    DATABASE_URL: database.url,
    SQLITE_DATA_DIR: sqliteDir,
    INDEX_SYNC: 'false',
    JWT_SECRET: randomBytes(32).toString('hex'),
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    TRUST_PROXY: 'true',
  };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-process-'));
    dirs.push(dir);
    return dir;
  };
  // The first process applies the migrations; the second then starts on an up-to-date store.
  servers.push(await spawnServer({ ...shared, DATA_DIR: dataDir() }));
  servers.push(await spawnServer({ ...shared, DATA_DIR: dataDir() }));
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await dropDatabase?.();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('one SQLite folder, two processes taking uploads', () => {
  it('when four 45 MiB uploads of a free account reach two processes at once, then exactly three are kept and the folder stays within 150 MiB', async () => {
    const user = await registerUser(new ApiClient(servers[0]!.url));
    const big = readFileSync(await onSqlite(dirs[1]!, 'big.db', [
      'CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)',
      'INSERT INTO blobs VALUES (1, zeroblob(47000000))',
    ]));
    expect(3 * big.length).toBeLessThanOrEqual(FREE_FOLDER_BYTES);
    expect(4 * big.length).toBeGreaterThan(FREE_FOLDER_BYTES);

    const answers = await Promise.all([1, 2, 3, 4].map((i) => sendUpload(servers[i % 2]!.url, user.token, `part-${i}.db`, big, false)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 413]);
    expect(JSON.parse(answers.find((a) => a.status === 413)!.body).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: FREE_FOLDER_BYTES } });
    const kept = readdirSync(join(sqliteDir, user.id));
    expect(kept).toHaveLength(3);
    const listed = (await new ApiClient(servers[1]!.url).get('/api/v1/sqlite-files', { token: user.token })).body.data;
    expect(listed.usedBytes).toBe(3 * big.length);
  }, 120_000);
});
