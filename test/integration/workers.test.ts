/**
 * WORKERS=2: one primary and two server processes on one port (Node's cluster), sharing a PostgreSQL store and Redis.
 * Connections reach both workers; a key revoked through one is refused by the other well before its 5 s key cache
 * would let it go; a worker that dies is replaced; a stop ends them all. Needs PostgreSQL (PG_URL) and Redis
 * (REDIS_URL); a missing service fails the test.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPids } from '../../scripts/lib/processes.js';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { freshPostgresDatabase, redisUrl } from '../support/stores.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

let server: ServerProcess;
let dropDatabase: () => Promise<void>;
let databaseUrl: string;
let dataDir: string;
let client: ApiClient;
let owner: TestUser;

/** The workers the primary started. */
const workerPids = (): number[] => childPids(server.child.pid!);

/** A GET on a connection of its own (no keep-alive), so that the cluster hands each request to the next worker. */
function getOnNewConnection(path: string, token: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${path} within 10 s`)));
    req.end();
  });
}

/** The pids of the access-log lines of a request id (pino's base names the worker). */
function servedBy(requestIds: string[]): Set<number> {
  const pids = new Set<number>();
  for (const line of server.output().split('\n')) {
    if (!line.startsWith('{') || !line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { pid?: number; requestId?: string };
    if (entry.requestId && requestIds.includes(entry.requestId) && entry.pid) pids.add(entry.pid);
  }
  return pids;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  const database = await freshPostgresDatabase();
  dropDatabase = database.drop;
  databaseUrl = database.url;
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-workers-'));
  server = await spawnServer({ WORKERS: '2', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
  // The second worker may still be compiling the sources (tsx) when the first answers health.
  await until(() => workerPids().length === 2 && server.output().includes('Quarry started 2 worker processes'), 120_000);
  client = new ApiClient(server.url);
  owner = await registerUser(client);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('WORKERS=2', () => {
  it('when requests come on separate connections, then both workers answer them, each knowing what the other stored', async () => {
    const key: TestKey = await createKey(client, owner);
    const answers = [];
    for (let i = 0; i < 6; i += 1) answers.push(await getOnNewConnection('/api/v1/rate-limit/status', key.secret));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const served = servedBy(answers.map((a) => a.body.meta.requestId));
    expect([...served].sort()).toEqual(workerPids().sort());
  });

  it('when a key both workers have cached is revoked, then each refuses it at once (Redis invalidation), not after the cache', async () => {
    const key = await createKey(client, owner);
    const before = [];
    for (let i = 0; i < 4; i += 1) before.push(await getOnNewConnection('/api/v1/rate-limit/status', key.secret));
    expect(servedBy(before.map((a) => a.body.meta.requestId)).size).toBe(2);
    expect((await client.delete(`/api/v1/keys/${key.id}`, { token: owner.token })).status).toBe(200);
    // The key cache would keep it 5 s in a worker that missed the invalidation; both must refuse before that.
    await until(async () => {
      const after = await Promise.all([0, 1, 2, 3].map(() => getOnNewConnection('/api/v1/rate-limit/status', key.secret)));
      return after.every((a) => a.status === 401 && a.body.error.code === 'KEY_REVOKED') && servedBy(after.map((a) => a.body.meta.requestId)).size === 2;
    }, 4000);
  });

  it('when a worker is killed, then the primary starts another and the server keeps answering', async () => {
    const [victim, survivor] = workerPids();
    process.kill(victim!, 'SIGKILL');
    await until(() => server.output().includes('a worker stopped: starting another'), 10_000);
    // Until its replacement listens, the other worker answers every connection.
    expect((await getOnNewConnection('/api/v1/auth/profile', owner.token)).status).toBe(200);
    await until(() => workerPids().length === 2 && !workerPids().includes(victim!), 15_000);
    const replacement = workerPids().find((pid) => pid !== survivor)!;
    await until(() => server.output().split('\n').some((line) => line.includes(`"pid":${replacement},`) && line.includes('Quarry listening on')), 60_000);
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await getOnNewConnection('/api/v1/auth/profile', owner.token));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect([...servedBy(answers.map((a) => a.body.meta.requestId))].sort()).toEqual(workerPids().sort());
  }, 120_000);

  it('when every worker is killed at once, then the primary lives on and starts them all again', async () => {
    const killed = workerPids();
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    const listening = (pid: number) => server.output().split('\n').some((line) => line.includes(`"pid":${pid},`) && line.includes('Quarry listening on'));
    await until(() => {
      const now = workerPids();
      return now.length === 2 && now.every((pid) => !killed.includes(pid) && listening(pid));
    }, 90_000);
    expect(server.child.exitCode).toBeNull();
    expect((await getOnNewConnection('/api/v1/auth/profile', owner.token)).status).toBe(200);
  }, 120_000);

  it('when the primary is told to stop, then every worker stops and the primary exits 0', async () => {
    const workers = workerPids();
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('WORKERS=2 that cannot start', () => {
  it('when the port is taken, then the start stops with exit 1 and says a worker could not start', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: root,
        // The first server's DATA_DIR: its generated secrets are the ones the store's rows were written with.
        env: { ...process.env, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: String(port), WORKERS: '2', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(output).toContain('Quarry failed to start: a worker stopped while the server started');
      expect(output).toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
  }, 120_000);
});
