/**
 * The rate limiter against a real Redis (REDIS_URL, default redis://127.0.0.1:6379): the same contract as the
 * memory store, exactness under concurrency across connections and OS processes, TTLs, and the fallback when
 * Redis is unreachable. Keys live under a per-run prefix that is deleted afterwards.
 * Without Redis the suite is skipped with a message, except under CI=true, where that is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createRateLimitStore, limitsForTier, perHourRule, RedisStore, requestRule, ResilientStore, type RateLimitRule,
} from '../../src/rate-limit/index.js';
import { describeStoreContract, freshAccount, freshSubject, rule } from '../unit/rate-limit/store-contract.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const IN_CI = process.env.CI === 'true';
const PREFIX = `quarry:rl:test:${randomUUID()}:`;
const T0 = Date.UTC(2030, 0, 1);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function redisReachable(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const reachable = await redisReachable(REDIS_URL);
if (!reachable && !IN_CI) {
  console.warn(`[rate-limit-redis] Redis is unreachable at ${REDIS_URL}: skipping the Redis tests (they fail under CI=true).`);
}

describe('Redis for the rate-limit integration tests', () => {
  it.runIf(!reachable && IN_CI)('when CI is true, then Redis must be reachable', () => {
    throw new Error(`Redis is unreachable at ${REDIS_URL}; start it or set REDIS_URL`);
  });
  it.runIf(reachable)('when the tests start, then Redis answers', () => expect(reachable).toBe(true));
});

describe.skipIf(!reachable)('rate limiting on a real Redis', () => {
  let admin: Redis;
  let store: RedisStore;
  let resilient: ResilientStore;
  const extra: RedisStore[] = [];

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
    // A generous timeout: these tests check exactness, not latency, and must not flake on a loaded machine.
    store = new RedisStore({ url: REDIS_URL, prefix: PREFIX, commandTimeoutMs: 5000 });
    resilient = new ResilientStore({
      primary: new RedisStore({ url: REDIS_URL, prefix: `${PREFIX}resilient:`, commandTimeoutMs: 5000 }),
      timeoutMs: 5000,
    });
  });

  afterAll(async () => {
    const keys = await prefixedKeys();
    if (keys.length > 0) await admin.del(...keys);
    await Promise.all([store.close(), resilient.close(), ...extra.map((s) => s.close())]);
    admin.disconnect();
  });

  async function prefixedKeys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const batch of admin.scanStream({ match: `${PREFIX}*`, count: 1000 })) keys.push(...(batch as string[]));
    return keys;
  }

  describeStoreContract('RedisStore', () => store);
  describeStoreContract('ResilientStore over a live Redis', () => resilient);

  it('when the resilient store ran the contract, then its decisions were made in Redis', () => {
    expect(resilient.status()).toEqual({ mode: 'redis', redisUp: true, lastError: null });
  });

  it('when keys are written, then each carries the prefix, the subject as a hash tag and a TTL', async () => {
    const subject = freshSubject();
    const r = rule({ limit: 1, burstLimit: 1, blockSeconds: 300 });
    await store.consume(subject, r, T0);
    await store.consume(subject, r, T0); // starts a block
    await store.acquireConcurrency(subject, 1, 'lease', T0, 30_000);

    expect(await admin.pttl(`${PREFIX}{${subject}}:log`)).toBeGreaterThan(3_590_000);
    expect(await admin.pttl(`${PREFIX}{${subject}}:block`)).toBeGreaterThan(290_000);
    expect(await admin.pttl(`${PREFIX}{${subject}}:leases`)).toBeGreaterThan(25_000);
    for (const key of await prefixedKeys()) expect(await admin.pttl(key), key).toBeGreaterThan(0);
  });

  it('when 200 requests for a limit of 50 arrive at once over 2 connections, then exactly 50 are admitted', async () => {
    const other = new RedisStore({ url: REDIS_URL, prefix: PREFIX, commandTimeoutMs: 5000 });
    extra.push(other);
    const subject = freshSubject();
    const r = rule({ limit: 50, burstLimit: 50, blockSeconds: 300 });
    const now = Date.now();
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? store : other).consume(subject, r, now + (i % 7))),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    expect((await store.peek(subject, r, now + 10)).used).toBe(50);
  });

  it('when two OS processes each send 150 concurrent requests for a limit of 100, then exactly 100 are admitted', async () => {
    const subject = freshSubject();
    const env = { ...process.env, REDIS_URL, RL_PREFIX: PREFIX, RL_SUBJECT: subject, RL_REQUESTS: '150', RL_LIMIT: '100' };
    const workers = [0, 1].map(() =>
      spawn(process.execPath, ['--import', 'tsx', 'test/integration/rate-limit-worker.ts'], { cwd: ROOT, env }),
    );
    try {
      const outputs = workers.map(collectLines);
      await Promise.all(outputs.map((lines) => lines.next('ready')));
      for (const worker of workers) worker.stdin!.write('go\n');
      const results = await Promise.all(outputs.map((lines) => lines.next('{')));
      const admitted = results.map((line) => (JSON.parse(line) as { admitted: number }).admitted);
      expect(admitted[0]! + admitted[1]!).toBe(100);

      const r: RateLimitRule = rule({ limit: 100, burstLimit: 100, blockSeconds: 300 });
      expect((await store.peek(subject, r, Date.now())).used).toBe(100);
    } finally {
      for (const worker of workers) if (worker.exitCode === null) worker.kill();
    }
  });

  it('when three OS processes each send 80 concurrent requests with their own key for an account limit of 100, then exactly 100 are admitted in total', async () => {
    const { account, key } = freshAccount();
    const workers = ['a', 'b', 'c'].map((keyId) => spawn(process.execPath, ['--import', 'tsx', 'test/integration/rate-limit-worker.ts'], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL, RL_PREFIX: PREFIX, RL_SUBJECT: key(keyId), RL_REQUESTS: '80', RL_LIMIT: '1000', RL_ACCOUNT: account, RL_ACCOUNT_LIMIT: '100' },
    }));
    try {
      const outputs = workers.map(collectLines);
      await Promise.all(outputs.map((lines) => lines.next('ready')));
      for (const worker of workers) worker.stdin!.write('go\n');
      const results = await Promise.all(outputs.map((lines) => lines.next('{')));
      const admitted = results.map((line) => (JSON.parse(line) as { admitted: number }).admitted);
      expect(admitted.reduce((sum, n) => sum + n, 0)).toBe(100);

      const now = Date.now();
      expect((await store.peek(account, perHourRule(100), now)).used).toBe(100);
      // Counted in both or neither: the keys' counts add up to the account's.
      const keyRule = rule({ limit: 1000, burstLimit: 1000, blockSeconds: 300 });
      const keyCounts = await Promise.all(['a', 'b', 'c'].map(async (keyId) => (await store.peek(key(keyId), keyRule, now)).used));
      expect(keyCounts.reduce((sum, n) => sum + n, 0)).toBe(100);
    } finally {
      for (const worker of workers) if (worker.exitCode === null) worker.kill();
    }
  });

  it('when an account\'s subjects are written, then every key shares the account\'s hash tag (one Cluster slot)', async () => {
    const { account, key } = freshAccount();
    await store.consumeAll([{ subject: key('a'), rule: rule({}) }, { subject: account, rule: perHourRule(5) }], T0);
    const tag = account.slice(0, account.indexOf('}') + 1);
    expect(tag).toMatch(/^\{account:[^}]+\}$/);
    expect(await admin.pttl(`${PREFIX}${key('a')}:log`)).toBeGreaterThan(0);
    expect(await admin.pttl(`${PREFIX}${account}:log`)).toBeGreaterThan(0);
    await expect(store.consumeAll([{ subject: key('a'), rule: rule({}) }, { subject: freshSubject(), rule: rule({}) }], T0))
      .rejects.toThrow(/hash tag/);
  });
});

describe('ResilientStore when Redis is unreachable', () => {
  it('when Redis is on a dead port, then decisions come from memory, nothing throws and health says redisUp false', async () => {
    const onError = vi.fn();
    const store = createRateLimitStore({ redisUrl: 'redis://127.0.0.1:1', prefix: PREFIX, onError });
    try {
      const r = perHourRule(3);
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await store.consume('key:dead', r, T0));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
      expect(decisions[3]).toMatchObject({ reason: 'hourly', retryAfterSeconds: 3600 });
      await expect(store.peek('key:dead', r, T0)).resolves.toMatchObject({ used: 3 });
      await expect(store.acquireConcurrency('conn:dead', 1, 'a', T0, 1000)).resolves.toBe(true);
      await expect(store.releaseConcurrency('conn:dead', 'a')).resolves.toBeUndefined();
      expect(await store.ping()).toBe(false);
      expect(store.status()).toMatchObject({ mode: 'memory', redisUp: false });
      expect(store.status().lastError).toEqual(expect.any(String));
      expect(onError).toHaveBeenCalledTimes(1);
    } finally {
      await store.close();
    }
  });

  const haveRedisServer = spawnSync('redis-server', ['--version']).status === 0;
  it.skipIf(!haveRedisServer)('when Redis goes away and comes back, then the store falls back and then recovers', async () => {
    const port = await freePort();
    const onError = vi.fn();
    const onRecover = vi.fn();
    const url = `redis://127.0.0.1:${port}`;
    let server = startRedisServer(port);
    await vi.waitFor(async () => expect(await redisReachable(url)).toBe(true), { timeout: 10_000, interval: 100 });
    const store = createRateLimitStore({ redisUrl: url, prefix: PREFIX, onError, onRecover });
    try {
      expect(await store.ping()).toBe(true);
      const r = perHourRule(100);
      await store.consume('key:k', r, T0);
      expect(store.status().mode).toBe('redis');

      await stop(server);
      expect(await store.consume('key:k', r, T0)).toMatchObject({ allowed: true, used: 1 }); // a fresh memory count
      expect(store.status()).toMatchObject({ mode: 'memory', redisUp: false });
      expect(onError).toHaveBeenCalledTimes(1);

      server = startRedisServer(port);
      await vi.waitFor(async () => expect(await store.ping()).toBe(true), { timeout: 10_000, interval: 200 });
      expect(store.status()).toMatchObject({ mode: 'redis', redisUp: true });
      expect(onRecover).toHaveBeenCalledTimes(1);
      // An in-memory Redis restarted empty: the count starts again there.
      expect(await store.consume('key:k', r, T0)).toMatchObject({ allowed: true, used: 1 });
    } finally {
      await store.close();
      await stop(server);
    }
  });
});

function startRedisServer(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Reads a child's stdout line by line; `next(start)` waits for the next line that starts with `start`. */
function collectLines(child: ChildProcess) {
  let buffer = '';
  let stderr = '';
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
    waiters.splice(0).forEach((wake) => wake());
  });
  return {
    async next(start: string): Promise<string> {
      for (;;) {
        const index = lines.findIndex((line) => line.startsWith(start));
        if (index >= 0) return lines.splice(0, index + 1).at(-1)!;
        if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}): ${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          child.once('exit', () => resolve());
        });
      }
    },
  };
}
