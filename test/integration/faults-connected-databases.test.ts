/**
 * Faults in the users' connected databases: a private PostgreSQL cluster (never the shared one) that stops and
 * comes back, and one behind a proxy that starts hanging (accepts, never answers). A healthy SQLite connection
 * keeps answering beside them; a failing database never fails a live search, and searches of Quarry's index do not
 * need the database at all.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { setAccount } from '../../scripts/lib/store-admin.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onPrivatePostgres, startHangingProxy, startPrivatePostgres, type HangingProxy, type PrivatePostgres } from '../support/fault-instances.js';
import { seedSqlite } from '../support/search-corpus.js';

const SEARCH_TIMEOUT_MS = 800;

let postgres: PrivatePostgres | undefined;
let proxy: HangingProxy | undefined;
let server: ServerProcess | undefined;
let client: ApiClient;
let user: TestUser;
let key: TestKey;
const ids = { catalog: '', hanging: '', notes: '' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const catalogStatements = [
  'CREATE TABLE products (id int PRIMARY KEY, title text NOT NULL, body text)',
  "INSERT INTO products VALUES (1, 'Wireless headphones', 'Noise cancelling headphones with a long battery.'), (2, 'Studio headphones', 'Wired headphones for monitoring.'), (3, 'Speaker', 'Portable speaker.')",
  "CREATE INDEX ON products USING GIN (to_tsvector('english', title || ' ' || coalesce(body, '')))",
  'ANALYZE products',
];

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await onPrivatePostgres(postgres.url, ['CREATE DATABASE catalog', 'CREATE DATABASE hanging']);
  await onPrivatePostgres(postgres.urlFor('catalog'), catalogStatements);
  await onPrivatePostgres(postgres.urlFor('hanging'), catalogStatements);
  proxy = await startHangingProxy(postgres.port);
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-fault-connected-'));
  server = await spawnServer({
    DATA_DIR: dataDir,
    TRUST_PROXY: 'true',
    SEARCH_TIMEOUT_MS: String(SEARCH_TIMEOUT_MS),
    SEARCH_CACHE_TTL_MS: '0', // every search really reaches the databases
  });
  client = new ApiClient(server.url);
  user = await registerUser(client);
  await setAccount(`sqlite:${join(dataDir, 'quarry.sqlite')}`, user.email, { plan: 'pro' });
  await seedSqlite(join(dataDir, 'sqlite', user.id), 'notes.db', 'notes');
  key = await createKey(client, user, { rateLimitTier: 'pro', permissions: ['search'] });
  const connect = async (body: Record<string, unknown>) => {
    const answer = await client.post('/api/v1/databases', { environment: 'test', ...body }, { token: user.token });
    if (answer.status !== 201) throw new Error(`connect failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.data.database.id as string;
  };
  const pgBody = (name: string, database: string, port: number) => ({ name, engine: 'postgres', host: '127.0.0.1', port, database, username: 'postgres', password: '' });
  ids.catalog = await connect(pgBody('Catalog', 'catalog', postgres.port));
  ids.hanging = await connect(pgBody('Hanging', 'hanging', proxy.port));
  ids.notes = await connect({ name: 'Notes', engine: 'sqlite', database: 'notes.db' });
  for (const id of Object.values(ids)) await waitForIndex(client, user.token, id);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await postgres?.cleanup();
});

/** Live by default: these faults are the databases'; the index answers without them (`live` false). */
const search = (query: string, databases: string[], live = true) => client.post('/api/v1/search', { query, databases, live }, { token: key.secret });
const statusOf = (answer: { body: any }, id: string) => answer.body.data.databases.find((d: { databaseId: string }) => d.databaseId === id);

describe('a connected PostgreSQL stops', () => {
  it('when it stops, then search is 200 with it as error and the other results, test is ok:false; when it restarts, then search recovers', async () => {
    const healthy = await search('headphones', [ids.catalog, ids.notes]);
    expect(healthy.status).toBe(200);
    expect(statusOf(healthy, ids.catalog)).toMatchObject({ status: 'ok', matches: 2 });
    expect(statusOf(healthy, ids.notes)).toMatchObject({ status: 'ok' });
    const notesMatches = statusOf(healthy, ids.notes).matches;
    expect(notesMatches).toBeGreaterThan(0);

    await postgres!.stop();
    const down = await search('headphones', [ids.catalog, ids.notes]);
    expect(down.status).toBe(200);
    expect(statusOf(down, ids.catalog)).toMatchObject({ status: 'error', matches: 0, error: { code: expect.any(String), message: expect.any(String) } });
    expect(JSON.stringify(statusOf(down, ids.catalog).error)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|postgres:\/\//);
    expect(statusOf(down, ids.notes)).toMatchObject({ status: 'ok', matches: notesMatches });
    expect(down.body.data.results.length).toBeGreaterThan(0);
    expect(down.body.data.results.every((r: { databaseId: string }) => r.databaseId === ids.notes)).toBe(true);
    // Its rows are still in the index, which answers without it.
    const fromIndex = await search('headphones', [ids.catalog, ids.notes], false);
    expect(statusOf(fromIndex, ids.catalog)).toMatchObject({ status: 'ok', matches: 2, source: 'index', error: null });

    const test = await client.post(`/api/v1/databases/${ids.catalog}/test`, undefined, { token: user.token });
    expect(test.status).toBe(200);
    expect(test.body.data).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^DATABASE_[A-Z_]+$/) } });
    expect(JSON.stringify(test.body.data.error)).not.toMatch(/ECONNREFUSED|postgres:\/\//);

    await postgres!.start();
    let again = await search('headphones', [ids.catalog, ids.notes]);
    for (let i = 0; i < 20 && statusOf(again, ids.catalog)?.status !== 'ok'; i += 1) {
      await sleep(250);
      again = await search('headphones', [ids.catalog, ids.notes]);
    }
    expect(statusOf(again, ids.catalog)).toMatchObject({ status: 'ok', matches: 2, error: null });
    expect((await client.post(`/api/v1/databases/${ids.catalog}/test`, undefined, { token: user.token })).body.data.ok).toBe(true);
    expect(server!.child.exitCode).toBeNull();
  }, 60_000);
});

describe('a connected database hangs', () => {
  it('when it accepts and never answers, then search answers within SEARCH_TIMEOUT_MS with it as timeout and the others results', async () => {
    const before = await search('headphones', [ids.hanging, ids.notes]);
    expect(statusOf(before, ids.hanging)).toMatchObject({ status: 'ok', matches: 2 });

    proxy!.hang();
    for (let round = 0; round < 2; round += 1) {
      const started = Date.now();
      const hung = await search('headphones', [ids.hanging, ids.notes, ids.catalog]);
      const took = Date.now() - started;
      expect(hung.status).toBe(200);
      expect(took).toBeLessThan(SEARCH_TIMEOUT_MS + 700);
      expect(statusOf(hung, ids.hanging)).toMatchObject({ status: 'timeout', matches: 0 });
      expect(statusOf(hung, ids.notes)).toMatchObject({ status: 'ok' });
      expect(statusOf(hung, ids.catalog)).toMatchObject({ status: 'ok', matches: 2 });
      expect(hung.body.data.results.some((r: { databaseId: string }) => r.databaseId === ids.catalog)).toBe(true);
      expect(hung.body.data.results.some((r: { databaseId: string }) => r.databaseId === ids.hanging)).toBe(false);
    }
    const started = Date.now();
    const fromIndex = await search('headphones', [ids.hanging, ids.notes], false);
    expect(Date.now() - started).toBeLessThan(SEARCH_TIMEOUT_MS);
    expect(statusOf(fromIndex, ids.hanging)).toMatchObject({ status: 'ok', matches: 2, source: 'index' });
    expect(server!.child.exitCode).toBeNull();
  }, 60_000);
});
