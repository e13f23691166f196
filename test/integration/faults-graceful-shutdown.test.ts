/**
 * Stopping under load: SIGTERM while searches and key requests keep arriving, with connected
 * databases that stopped answering mid-session: a MariaDB and a PostgreSQL behind proxies that hang (connections
 * accepted, nothing ever answered, not even the goodbye of a pool's close). The stop must end within a bounded time
 * whatever they do: in-flight requests complete, every answered request's records are in the store, exit code 0.
 * Batches are never flushed on a timer here (USAGE_FLUSH_MS=60000), so every record after the exit was written by
 * the shutdown. The figures are printed for the record.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liftKeyLimits } from '../../scripts/lib/bench.js';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { setAccount } from '../../scripts/lib/store-admin.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser } from '../support/factories.js';
import { waitForIndex } from '../support/indexing.js';
import { onPrivatePostgres, startHangingProxy, startPrivatePostgres, type HangingProxy, type PrivatePostgres } from '../support/fault-instances.js';
import { seedMysql, seedSqlite } from '../support/search-corpus.js';
import { mysqlConnection, onMysql } from '../support/seed-databases.js';

const SEARCH_TIMEOUT_MS = 1500;
const myTable = `shutdown_${randomBytes(4).toString('hex')}`;

let postgres: PrivatePostgres | undefined;
let pgProxy: HangingProxy | undefined;
let myProxy: HangingProxy | undefined;
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
  await seedMysql(`\`${myTable}\``);
  pgProxy = await startHangingProxy(postgres.port);
  myProxy = await startHangingProxy(mysqlConnection().port);
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-fault-shutdown-'));
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
  await pgProxy?.close();
  await myProxy?.close();
  await postgres?.cleanup();
  await onMysql([`DROP TABLE IF EXISTS \`${myTable}\``]).catch(() => undefined);
});

async function countRows(sql: string, params: unknown[]): Promise<number> {
  const db = new sqlite3.Database(join(dataDir, 'quarry.sqlite'), sqlite3.OPEN_READONLY);
  try {
    return await new Promise<number>((resolve, reject) =>
      db.get(sql, params, (err, row: { n: number } | undefined) => (err ? reject(err) : resolve(Number(row?.n ?? 0)))),
    );
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

describe('graceful shutdown under load with connected databases that stopped answering', () => {
  it('when SIGTERM arrives under load while a MariaDB and a PostgreSQL hang, then the process stops within seconds with code 0, no 5xx, and every answered request recorded', async () => {
    const client = new ApiClient(server!.url);
    const user = await registerUser(client);
    const store = `sqlite:${join(dataDir, 'quarry.sqlite')}`;
    await setAccount(store, user.email, { plan: 'pro' });
    await seedSqlite(join(dataDir, 'sqlite', user.id), 'notes.db', 'notes');
    const key = await createKey(client, user, { rateLimitTier: 'pro', permissions: ['search', 'analytics'] });
    await liftKeyLimits(store, key.id);
    const connect = async (body: Record<string, unknown>) => {
      const answer = await client.post('/api/v1/databases', { environment: 'test', ...body }, { token: user.token });
      if (answer.status !== 201) throw new Error(`connect failed: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.data.database.id as string;
    };
    const slow = await connect({ name: 'Slow', engine: 'postgres', host: '127.0.0.1', port: pgProxy!.port, database: 'slow', username: 'postgres', password: '' });
    const shop = await connect({ ...mysqlConnection({ name: 'Shop', port: myProxy!.port, tables: [myTable] }) });
    const notes = await connect({ name: 'Notes', engine: 'sqlite', database: 'notes.db' });
    // The connections' first syncs end before the database hangs (a sync reading a hanging database holds the stop).
    await waitForIndex(client, user.token, slow);
    await waitForIndex(client, user.token, notes);
    const databases = [slow, shop, notes];

    // Healthy first: every pool holds open connections to its server.
    const warm = await client.post('/api/v1/search', { query: 'headphones', databases }, { token: key.secret });
    expect(warm.body.data.databases.map((d: { status: string }) => d.status)).toEqual(['ok', 'ok', 'ok']);
    pgProxy!.hang();
    myProxy!.hang();

    const answered: Array<{ kind: 'search' | 'key'; status: number }> = [];
    let refused = 0;
    let running = true;
    const loop = async (kind: 'search' | 'key', send: () => Promise<{ status: number }>) => {
      while (running) {
        try {
          answered.push({ kind, status: (await send()).status });
        } catch {
          refused += 1; // the server no longer accepts connections: stopping
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server!.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const traffic = Promise.all([
      loop('search', () => client.post('/api/v1/search', { query: 'headphones', databases, live: true }, { token: key.secret })),
      loop('search', () => client.post('/api/v1/search', { query: 'speaker', databases, live: true }, { token: key.secret })),
      loop('key', () => client.get('/api/v1/rate-limit/status', { token: key.secret })),
      loop('key', () => client.get('/health', { token: key.secret })),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 2500)); // searches in flight, each waiting on the hung servers
    const signalledAt = Date.now();
    server!.child.kill('SIGTERM');
    const stopped = await Promise.race([exit, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
    const seconds = (Date.now() - signalledAt) / 1000;
    running = false;
    await traffic;

    const searches200 = answered.filter((a) => a.kind === 'search' && a.status === 200).length;
    const recorded = stopped ? await countRows('SELECT COUNT(*) AS n FROM search_records WHERE key_id = ?', [key.id]) - 1 : -1; // less the warm-up
    const key2xx = answered.filter((a) => a.status < 300).length;
    const usage = stopped ? await countRows('SELECT SUM(requests - failed) AS n FROM request_usage_minutely WHERE key_id = ?', [key.id]) - 1 : -1;
    const fiveXx = answered.filter((a) => a.status >= 500).length;
    console.info(`SIGTERM under load, MariaDB and PostgreSQL hung: ${stopped ? `stopped in ${seconds.toFixed(1)} s with code ${stopped.code}` : 'still running after 30 s'}; `
      + `${answered.length} requests answered (5xx ${fiveXx}), ${refused} refused once stopping; searches answered 200: ${searches200}, recorded: ${recorded}, missing: ${searches200 - recorded}; `
      + `key requests answered 2xx: ${key2xx}, in usage: ${usage}, missing: ${key2xx - usage}`);

    if (stopped?.code !== 0) console.info(server!.output().slice(-4000));
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(seconds).toBeLessThan(10);
    expect(server!.output()).not.toMatch(/shutdown failed|SHUTDOWN_TIMEOUT_MS/);
    expect(fiveXx).toBe(0);
    expect(searches200).toBeGreaterThan(0);
    expect(recorded).toBe(searches200);
    expect(usage).toBe(key2xx);
  }, 90_000);
});
