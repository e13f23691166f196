/**
 * The analytics figure: analytics latency over a month of a busy user's searches. Seeds at least 1,000,000 search
 * records over 30 days for a few users (multi-row INSERTs in transactions) into a fresh store, then times every
 * analytics endpoint for the busiest user over varied ranges, next to two baselines measured in the same run:
 * GET /health (the HTTP floor) and a plain `SELECT COUNT(*)` over that user's month (the store floor).
 *   npx tsx scripts/bench/analytics.ts [--rows 1000000] [--iterations 12] [--pg]
 * PostgreSQL runs too when --pg is given or PG_URL is set (a fresh database is created and dropped).
 */
import { percentile } from './lib/stats.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { QueryTypes, Sequelize } from 'sequelize';
import { newId } from '../../src/lib/ids.js';
import { rebuildRollups } from '../../src/repositories/search-rollups.js';
import { ApiClient } from '../lib/api-client.js';
import { createKey, registerUser, uniqueEmail, type TestUser } from '../lib/accounts.js';
import { freshPostgresDatabase } from '../lib/stores.js';
import { spawnServer } from '../lib/spawn-server.js';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, iterations: { type: 'string', default: '12' }, pg: { type: 'boolean', default: false } } });
const ROWS = Number(args.rows);
const ITERATIONS = Number(args.iterations);
const DAY = 86_400_000;

// ---- synthetic traffic ------------------------------------------------------------------------------------
/** A deterministic generator (mulberry32), so every run seeds the same data. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const words = ['wireless', 'headphones', 'usb', 'cable', 'annual', 'report', 'invoice', 'laptop', 'stand', 'charger', 'noise', 'cancelling', 'monitor', 'desk', 'chair', 'printer', 'toner', 'keyboard', 'mouse', 'hub', 'adapter', 'speaker', 'camera', 'tripod', 'battery'];
const rand = random(42);
/** 3,000 distinct queries; picked with a Zipf-like skew, as real search logs are. */
const vocabulary = Array.from({ length: 3000 }, (_, i) => `${words[i % words.length]} ${words[(i * 7 + 3) % words.length]}${i >= words.length ? ` ${i}` : ''}`);
const pickQuery = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.pow(rand(), 3) * vocabulary.length))]!;
const tableSets = [['products'], ['products', 'reviews'], ['documents'], ['orders'], ['notes'], ['products', 'documents']];

interface Store {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  sequelize: Sequelize;
  cleanup(): Promise<void>;
}

async function sqliteStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-analytics-'));
  const file = join(dir, 'quarry.sqlite');
  return {
    kind: 'sqlite',
    env: { DATA_DIR: dir },
    sequelize: new Sequelize({ dialect: 'sqlite', storage: file, logging: false }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function postgresStore(): Promise<Store> {
  const db = await freshPostgresDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-analytics-'));
  return {
    kind: 'postgres',
    env: { DATA_DIR: dir, DATABASE_URL: db.url },
    sequelize: new Sequelize(db.url, { logging: false }),
    cleanup: async () => {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const timestamp = (store: Store, at: Date) =>
  store.kind === 'sqlite' ? `'${at.toISOString().replace('T', ' ').replace('Z', ' +00:00')}'` : `'${at.toISOString()}'`;

/** Seeds ROWS searches over the 30 days before `now`: the busy user has half, the others share the rest. */
async function seed(store: Store, users: string[], keyId: string, databaseIds: string[], now: number): Promise<{ inserted: number; rollups: number }> {
  const started = performance.now();
  const per = 1000;
  const q = store.sequelize;
  if (store.kind === 'sqlite') await q.query('PRAGMA journal_mode=WAL');
  for (let done = 0; done < ROWS; ) {
    await q.transaction(async (transaction) => {
      for (let s = 0; s < 50 && done < ROWS; s += 1) {
        const rows: string[] = [];
        for (let i = 0; i < per && done < ROWS; i += 1, done += 1) {
          const busy = rand() < 0.5;
          const userId = busy ? users[0]! : users[1 + Math.floor(rand() * (users.length - 1))]!;
          const at = new Date(now - Math.floor(rand() * 30 * DAY));
          const tables = tableSets[Math.floor(rand() * tableSets.length)]!;
          const unindexed = tables.includes('documents') || tables.includes('notes')
            ? JSON.stringify(tables.filter((t) => t === 'documents' || t === 'notes').map((table) => ({ databaseId: databaseIds[table === 'notes' ? 1 : 0], table })))
            : '[]';
          const ms = Math.round(20 + Math.pow(rand(), 4) * (unindexed === '[]' ? 400 : 1500));
          const results = rand() < 0.07 ? 0 : Math.floor(rand() * 40);
          const status = rand() < 0.02 ? 'error' : rand() < 0.03 ? 'partial' : 'ok';
          rows.push(`('${newId('srch')}','${userId}','${keyId}','${pickQuery()}','natural','${JSON.stringify([databaseIds[0]])}','${JSON.stringify(tables)}',${results},${ms},'${status}','${unindexed}',${timestamp(store, at)})`);
        }
        await q.query(
          `INSERT INTO search_records (id, user_id, key_id, query, search_mode, databases, tables, result_count, response_time_ms, status, unindexed_tables, created_at) VALUES ${rows.join(',')}`,
          { transaction },
        );
      }
    });
  }
  const inserted = (performance.now() - started) / 1000;
  // Bulk-loaded rows bypass the recorder, so their roll-ups are computed the way the migration backfills them.
  const rollupStarted = performance.now();
  await rebuildRollups(q);
  await q.query(store.kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE');
  return { inserted, rollups: (performance.now() - rollupStarted) / 1000 };
}

async function connectDatabases(store: Store, userId: string, ids: string[]) {
  const cache = JSON.stringify([
    { name: 'documents', schema: 'public', primaryKey: ['id'], rowEstimate: 1e6, columns: [], textColumns: ['title', 'body'], fullTextIndexes: [] },
    { name: 'notes', schema: null, primaryKey: ['id'], rowEstimate: 1e4, columns: [{ name: 'id', type: 'INTEGER', searchable: false }], textColumns: ['text'], fullTextIndexes: [] },
  ]);
  for (const [i, id] of ids.entries()) {
    const engine = i === 0 ? 'postgres' : 'sqlite';
    await store.sequelize.query(
      `INSERT INTO database_connections (id, user_id, name, engine, host, port, database, ssl, environment, status, schema_cache, created_at, updated_at)
       VALUES (:id, :userId, :name, :engine, NULL, NULL, 'bench', false, 'test', 'connected', :cache, ${timestamp(store, new Date())}, ${timestamp(store, new Date())})`,
      { replacements: { id, userId, name: `bench ${engine}`, engine, cache } },
    );
  }
}

// ---- measuring --------------------------------------------------------------------------------------------

async function time(fn: () => Promise<void>): Promise<{ p50: number; p95: number }> {
  await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

/** Ranges cycled through by successive requests: periods and explicit windows inside the seeded month. */
function ranges(now: number): string[] {
  const day = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString().slice(0, 10);
  return ['period=day', 'period=week', 'period=month', `startDate=${day(20)}&endDate=${day(14)}`, `startDate=${day(29)}&endDate=${day(0)}`, `startDate=${day(10)}&endDate=${day(3)}`];
}

async function run(store: Store): Promise<void> {
  const adminEmail = uniqueEmail('bench-admin');
  const server = await spawnServer({ ...store.env, LOG_LEVEL: 'silent', TRUST_PROXY: 'true', RATE_LIMIT_ENABLED: 'false' });
  try {
    const client = new ApiClient(server.url);
    const users: TestUser[] = [];
    for (let i = 0; i < 5; i += 1) users.push(await registerUser(client));
    const admin = await registerUser(client, { email: adminEmail });
    // What `npm run user -- role|plan` does, straight into the store the server shares.
    await store.sequelize.query("UPDATE users SET role = 'admin' WHERE email = :email", { replacements: { email: adminEmail } });
    await store.sequelize.query("UPDATE users SET plan = 'enterprise' WHERE email = :email", { replacements: { email: users[0]!.email } });
    const key = await createKey(client, users[0]!, { rateLimitTier: 'enterprise' });
    const databaseIds = [newId('db'), newId('db')];
    await connectDatabases(store, users[0]!.id, databaseIds);
    const now = Date.now();
    const seconds = await seed(store, users.map((u) => u.id), key.id, databaseIds, now);
    const rollupRows = await Promise.all(['search_stats_hourly', 'search_query_stats_daily', 'search_table_stats_daily', 'search_latency_daily'].map(async (table) => {
      const [row] = (await store.sequelize.query(`SELECT COUNT(*) AS n FROM ${table}`, { type: QueryTypes.SELECT })) as Array<{ n: number }>;
      return `${table} ${Number(row!.n).toLocaleString('en-US')}`;
    }));
    const [{ busy }] = (await store.sequelize.query('SELECT COUNT(*) AS busy FROM search_records WHERE user_id = :id', { type: QueryTypes.SELECT, replacements: { id: users[0]!.id } })) as Array<{ busy: number }>;
    console.log(`\n${store.kind}: seeded ${ROWS.toLocaleString('en-US')} search records in ${seconds.inserted.toFixed(1)} s (busy user: ${Number(busy).toLocaleString('en-US')} in 30 days); roll-ups rebuilt in ${seconds.rollups.toFixed(1)} s (rows: ${rollupRows.join(', ')})`);

    const windows = ranges(now);
    let n = 0;
    const next = () => windows[n++ % windows.length]!;
    const jwt = (path: string, user = users[0]!) => async () => {
      const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${user.token}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    };
    const cases: Array<[string, () => Promise<void>]> = [
      ['baseline: GET /health', async () => void (await (await fetch(`${server.url}/health`)).arrayBuffer())],
      ['baseline: SELECT COUNT(*) over the busy month', async () => {
        await store.sequelize.query('SELECT COUNT(*) AS n FROM search_records WHERE user_id = :id AND created_at >= :since', {
          type: QueryTypes.SELECT, replacements: { id: users[0]!.id, since: new Date(now - 30 * DAY) },
        });
      }],
      ['dashboard', () => jwt(`/api/v1/analytics/dashboard?${next()}`)()],
      ['search-trends', () => jwt(`/api/v1/analytics/search-trends?${next()}`)()],
      ['performance', () => jwt(`/api/v1/analytics/performance?${next()}`)()],
      ['popular-queries', () => jwt(`/api/v1/analytics/popular-queries?${next()}`)()],
      ['insights', () => jwt(`/api/v1/analytics/insights?${next()}`)()],
      ['export csv raw, one day (~17k rows)', () => jwt('/api/v1/analytics/export?format=csv&period=day')()],
      ['export json per day', () => jwt(`/api/v1/analytics/export?format=json&granularity=day&${next()}`)()],
      ['admin system-overview (all users)', () => jwt(`/api/v1/analytics/admin/system-overview?${next()}`, admin)()],
      ['admin user-activity (all users)', () => jwt(`/api/v1/analytics/admin/user-activity?${next()}`, admin)()],
      ['key: search history (first page)', async () => void (await (await fetch(`${server.url}/api/v1/search/history`, { headers: { authorization: `Bearer ${key.secret}` } })).arrayBuffer())],
      ['key: search trends (month)', async () => void (await (await fetch(`${server.url}/api/v1/search/trends?period=month`, { headers: { authorization: `Bearer ${key.secret}` } })).arrayBuffer())],
    ];
    const results: Array<[string, { p50: number; p95: number }]> = [];
    for (const [label, fn] of cases) results.push([label, await time(fn)]);
    const floor = results[1]![1].p50;
    console.log(`\n| ${store.kind}: endpoint (busy user, ranges cycled: day, week, month, 7-day and 30-day windows) | p50 ms | p95 ms | p50 / COUNT(*) |`);
    console.log('|---|---|---|---|');
    for (const [label, { p50, p95 }] of results) console.log(`| ${label} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${(p50 / floor).toFixed(1)} |`);
  } finally {
    await server.stop();
    await store.sequelize.close();
    await store.cleanup();
  }
}

await run(await sqliteStore());
if (args.pg || process.env.PG_URL) await run(await postgresStore());
