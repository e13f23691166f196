/**
 * `npm run bench` (issue 9): throughput and latency of Quarry's request paths as ratios to bare Koa, all measured
 * in this one run on this machine. Each server runs in its own process; autocannon drives it from this one.
 *   bare Koa                 a Koa app answering a small JSON body (the ceiling)
 *   GET /health              public route through the whole pipeline (contract routing, validation, envelope)
 *   key-authenticated GET    GET /api/v1/search/history?limit=1 with an API key: key verified, rate-limited
 *                            (window, burst, concurrency), query validated, one indexed read
 *   search                   POST /api/v1/search over a SQLite FTS5 table, the query varied per request
 *   npx tsx scripts/bench.ts [seconds]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../test/support/api-client.js';
import { createKey, registerUser } from '../test/support/factories.js';
import { onSqlite } from '../test/support/seed-databases.js';
import { liftKeyLimits, load, printTable, type LoadResult } from './lib/bench.js';
import { freePort, spawnServer } from './lib/spawn-server.js';

const seconds = Number(process.argv[2] ?? 8);
const root = fileURLToPath(new URL('../', import.meta.url));

async function bareKoa(): Promise<LoadResult> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/lib/bare-koa.ts'], { cwd: root, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  try {
    return await load('bare Koa', `http://127.0.0.1:${port}/`, { seconds });
  } finally {
    child.kill('SIGTERM');
  }
}

const words = ['river', 'market', 'engine', 'garden', 'signal', 'winter', 'castle', 'library', 'doctor', 'storm', 'silver', 'harbor'];

async function quarry(): Promise<LoadResult[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
  await onSqlite(join(dataDir, 'sqlite'), 'bench.db', [
    'CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    "CREATE VIRTUAL TABLE articles_fts USING fts5(title, body, content='articles', content_rowid='id')",
    ...Array.from({ length: 200 }, (_, i) => `INSERT INTO articles (id, title, body) VALUES (${i + 1}, 'The ${words[i % 12]} report ${i}', 'A story about the ${words[(i * 7) % 12]} and the ${words[(i * 5) % 12]} near the ${words[(i * 3) % 12]}.')`),
    "INSERT INTO articles_fts(articles_fts) VALUES ('rebuild')",
  ]);
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TRUST_PROXY: 'true' });
  try {
    const client = new ApiClient(server.url);
    const user = await registerUser(client);
    const key = await createKey(client, user, { permissions: ['search', 'analytics'] });
    await liftKeyLimits(`sqlite:${join(dataDir, 'quarry.sqlite')}`, key.id);
    const database = await client.post('/api/v1/databases', { name: 'bench', engine: 'sqlite', database: 'bench.db', environment: 'test' }, { token: user.token });
    const auth = { authorization: `Bearer ${key.secret}` };
    const results = [
      await load('GET /health', `${server.url}/health`, { seconds }),
      await load('key-authenticated GET (rate-limited, validated)', `${server.url}/api/v1/search/history?limit=1`, { seconds, headers: auth }),
    ];
    if (database.status === 201) {
      let n = 0;
      results.push(await load('POST /api/v1/search (query varies)', `${server.url}/api/v1/search`, {
        seconds,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: () => JSON.stringify({ query: `${words[n++ % 12]} ${words[(n * 5) % 12]} ${n}`, limit: 10 }),
      }));
    }
    return results;
  } finally {
    await server.stop();
  }
}

const baseline = await bareKoa();
const rows = await quarry();
printTable(`Quarry request paths against bare Koa (${seconds} s per case, 16 connections, SQLite store, memory limits)`, baseline, rows);
const keyed = rows[1];
console.log(`\nkey-authenticated GET reaches ${(keyed.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)} x bare Koa throughput (target 0.5)`);
