/**
 * Graceful shutdown under load: SIGTERM while requests are in flight (slow searches against a connected database
 * that hangs, fast key requests). In-flight requests complete, the batched usage and search records are written
 * to the store, and the process exits 0. Batches are never flushed on a timer here (USAGE_FLUSH_MS=60000), so
 * every record in the store after the exit was written by the shutdown.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient, type ApiResponse } from '../support/api-client.js';
import { createKey, registerUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onPrivatePostgres, startHangingProxy, startPrivatePostgres, type HangingProxy, type PrivatePostgres } from '../support/fault-instances.js';
import { seedSqlite } from '../support/search-corpus.js';

const SEARCH_TIMEOUT_MS = 1500;

let postgres: PrivatePostgres | undefined;
let proxy: HangingProxy | undefined;
let server: ServerProcess | undefined;
let dataDir: string;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await onPrivatePostgres(postgres.url, ['CREATE DATABASE slow']);
  await onPrivatePostgres(postgres.urlFor('slow'), [
    'CREATE TABLE products (id int PRIMARY KEY, title text NOT NULL)',
    "INSERT INTO products VALUES (1, 'Wireless headphones'), (2, 'Speaker')",
    "CREATE INDEX ON products USING GIN (to_tsvector('english', title))",
  ]);
  proxy = await startHangingProxy(postgres.port);
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-fault-shutdown-'));
  await seedSqlite(join(dataDir, 'sqlite'), 'notes.db', 'notes');
  server = await spawnServer({
    DATA_DIR: dataDir,
    TRUST_PROXY: 'true',
    SEARCH_TIMEOUT_MS: String(SEARCH_TIMEOUT_MS),
    SEARCH_CACHE_TTL_MS: '0',
    USAGE_FLUSH_MS: '60000',
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await postgres?.cleanup();
});

async function countRows(sql: string, params: unknown[]): Promise<number> {
  const db = new sqlite3.Database(join(dataDir, 'quarry.sqlite'), sqlite3.OPEN_READONLY);
  try {
    return await new Promise<number>((resolve, reject) =>
      db.get(sql, params, (err, row: { n: number } | undefined) => (err ? reject(err) : resolve(row?.n ?? 0))),
    );
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

describe('graceful shutdown', () => {
  it('when SIGTERM arrives with requests in flight, then they complete, batched records are written and the exit code is 0', async () => {
    const client = new ApiClient(server!.url);
    const user = await registerUser(client);
    const key = await createKey(client, user, { rateLimitTier: 'pro', permissions: ['search', 'analytics'] });
    const connect = async (body: Record<string, unknown>) => {
      const answer = await client.post('/api/v1/databases', { environment: 'test', ...body }, { token: user.token });
      if (answer.status !== 201) throw new Error(`connect failed: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.data.database.id as string;
    };
    const slow = await connect({ name: 'Slow', engine: 'postgres', host: '127.0.0.1', port: proxy!.port, database: 'slow', username: 'postgres', password: '' });
    const notes = await connect({ name: 'Notes', engine: 'sqlite', database: 'notes.db' });
    // The connections' first syncs end before the database hangs (a sync reading a hanging database holds the stop).
    await waitForIndex(client, user.token, slow);
    await waitForIndex(client, user.token, notes);

    // Answered before the signal: recorded in memory only (no timed flush within this test).
    const early: ApiResponse[] = [];
    for (let i = 0; i < 3; i += 1) early.push(await client.get('/api/v1/rate-limit/status', { token: key.secret }));
    early.push(await client.post('/api/v1/search', { query: 'headphones', databases: [notes] }, { token: key.secret }));
    expect(early.map((a) => a.status)).toEqual([200, 200, 200, 200]);

    proxy!.hang();
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server!.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    // In flight at the signal: live searches that wait SEARCH_TIMEOUT_MS for the hanging database.
    const slowSearches = Array.from({ length: 4 }, (_, i) =>
      client.post('/api/v1/search', { query: `headphones ${i}`, databases: [slow, notes], live: true }, { token: key.secret }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalledAt = Date.now();
    server!.child.kill('SIGTERM');

    const answers = await Promise.all(slowSearches);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.data.databases.find((d: { databaseId: string }) => d.databaseId === slow)).toMatchObject({ status: 'timeout' });
      expect(answer.body.data.databases.find((d: { databaseId: string }) => d.databaseId === notes)).toMatchObject({ status: 'ok' });
    }
    const { code, signal } = await exit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(8_000);
    expect(server!.output()).not.toMatch(/shutdown failed/);

    // Everything answered was recorded: 3 status + 1 early search + 4 in-flight searches for this key.
    expect(await countRows('SELECT SUM(requests) AS n FROM request_usage_minutely WHERE key_id = ?', [key.id])).toBe(8);
    expect(await countRows('SELECT COUNT(*) AS n FROM search_records WHERE key_id = ?', [key.id])).toBe(5);
    expect(await countRows("SELECT COUNT(*) AS n FROM search_records WHERE key_id = ? AND status = 'partial'", [key.id])).toBe(4);
  }, 60_000);
});
