/**
 * Rate-limit state in Redis, shared by every Quarry process that points at the same server. Each decision is one
 * script call (ioredis `defineCommand`: EVALSHA, falling back to EVAL once per connection), so it is atomic.
 * Every key carries a TTL so Redis holds only what is still inside a window, block or lease.
 *
 * This store rejects on Redis errors; the service uses it only through ResilientStore.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { combine, toDecision, type RateLimitDecision, type RefusalReason } from './decision.js';
import { ACQUIRE_LUA, CONSUME_LUA, REFUND_LUA } from './redis-scripts.js';
import type { RateLimitRule } from './rules.js';
import type { CombinedDecision, LimitCheck, RateLimitStore, StoreStatus } from './store.js';

export const DEFAULT_PREFIX = 'quarry:rl:';

export interface RedisStoreOptions {
  /** Used when `client` is not given; the store then owns (and closes) its connection. */
  url?: string;
  /** An existing connection; the caller keeps ownership. */
  client?: Redis;
  prefix?: string;
  /** Per-command timeout; short, because a limiter that waits on Redis delays every request. */
  commandTimeoutMs?: number;
}

type ScriptArg = string | number;
interface ScriptedRedis extends Redis {
  /** The number of keys comes first (the script takes two per limit). */
  quarryRateLimitConsume(numberOfKeys: number, ...keysAndArgs: ScriptArg[]): Promise<number[]>;
  quarryRateLimitAcquire(leasesKey: string, ...args: ScriptArg[]): Promise<number>;
  quarryRateLimitRefund(logKey: string, ...args: ScriptArg[]): Promise<number>;
}

const REASONS: readonly (RefusalReason | null)[] = [null, 'hourly', 'burst', 'blocked'];

export class RedisStore implements RateLimitStore {
  readonly prefix: string;
  private readonly client: ScriptedRedis;
  private readonly ownsClient: boolean;
  /** Makes sorted-set members unique across processes admitting in the same millisecond. */
  private readonly token = randomBytes(6).toString('base64url');
  private sequence = 0;
  private lastError: string | null = null;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.ownsClient = !options.client;
    const client = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', {
      commandTimeout: options.commandTimeoutMs ?? 250,
      // Fail fast while disconnected instead of queueing requests behind a reconnect.
      maxRetriesPerRequest: 0,
      // A consume that may already have run must not be sent twice after a reconnect.
      autoResendUnfulfilledCommands: false,
      connectTimeout: 1_000,
      retryStrategy: (times: number) => Math.min(times * 100, 1_000),
    });
    // Without a listener ioredis prints every reconnect failure; the resilient store reports outages instead.
    client.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    client.defineCommand('quarryRateLimitConsume', { lua: CONSUME_LUA });
    client.defineCommand('quarryRateLimitAcquire', { numberOfKeys: 1, lua: ACQUIRE_LUA });
    client.defineCommand('quarryRateLimitRefund', { numberOfKeys: 1, lua: REFUND_LUA });
    this.client = client as ScriptedRedis;
  }

  async consume(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    return (await this.decide([{ subject, rule }], nowMs, false))[0]!;
  }

  async consumeAll(checks: readonly LimitCheck[], nowMs: number): Promise<CombinedDecision> {
    assertOneHashTag(checks);
    return combine(await this.decide(checks, nowMs, false));
  }

  async peek(subject: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    return (await this.decide([{ subject, rule }], nowMs, true))[0]!;
  }

  async refund(subject: string, atMs: number): Promise<void> {
    await this.client.quarryRateLimitRefund(this.key(subject, 'log'), Math.floor(atMs));
  }

  async acquireConcurrency(
    subject: string, max: number, leaseId: string, nowMs: number, leaseTtlMs: number,
  ): Promise<boolean> {
    const leases = this.key(subject, 'leases');
    const held = await this.client.quarryRateLimitAcquire(leases, nowMs, max, leaseId, nowMs + leaseTtlMs);
    return held === 1;
  }

  async releaseConcurrency(subject: string, leaseId: string): Promise<void> {
    await this.client.zrem(this.key(subject, 'leases'), leaseId);
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }

  status(): StoreStatus {
    return { mode: 'redis', redisUp: this.client.status === 'ready', lastError: this.lastError };
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    // QUIT would wait in the offline queue of a connection that is down; just drop it then.
    if (this.client.status !== 'ready') return this.client.disconnect();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  /**
   * A subject that carries its own hash tag (`{account:<id>}:key:<id>`) keeps it, so all of an account's subjects
   * share a slot; any other is wrapped whole (`{subject}`). Either way a subject's keys stay in one slot, so the
   * script also works on a Redis Cluster.
   */
  key(subject: string, kind: 'log' | 'block' | 'leases'): string {
    return hashTag(subject) ? `${this.prefix}${subject}:${kind}` : `${this.prefix}{${subject}}:${kind}`;
  }

  private async decide(checks: readonly LimitCheck[], nowMs: number, dryRun: boolean): Promise<RateLimitDecision[]> {
    const now = Math.floor(nowMs);
    const keys = checks.flatMap(({ subject }) => [this.key(subject, 'log'), this.key(subject, 'block')]);
    const args = checks.flatMap(({ rule }) => {
      const windowMs = rule.windowSeconds * 1000;
      const burstMs = rule.burstWindowSeconds * 1000;
      return [String(now - windowMs), String(now - burstMs), windowMs, burstMs, rule.limit, rule.burstLimit, rule.blockSeconds * 1000];
    });
    const reply = (await this.client.quarryRateLimitConsume(
      keys.length, ...keys, now, checks.length, `${now}:${this.token}:${++this.sequence}`, dryRun ? '1' : '0', ...args,
    )).map(Number);
    return checks.map(({ rule }, i) => {
      const [allowed, reason, used, oldest, blockedUntil, retryAt] = reply.slice(6 * i, 6 * i + 6) as [
        number, number, number, number, number, number,
      ];
      const outcome = {
        allowed: allowed === 1,
        reason: REASONS[reason] ?? null,
        used,
        oldestMs: oldest < 0 ? null : oldest,
        blockedUntilMs: blockedUntil > 0 ? blockedUntil : null,
        retryAtMs: retryAt > 0 ? retryAt : null,
      };
      return toDecision(outcome, rule, now);
    });
  }
}

/**
 * One script may only touch keys of one Cluster slot, so the subjects decided together must share a hash tag.
 * A mismatch is a programming error, thrown before Redis is asked (so it is never taken for an outage).
 */
export function assertOneHashTag(checks: readonly LimitCheck[]): void {
  const tags = new Set(checks.map((check) => hashTag(check.subject)));
  if (checks.length > 1 && (tags.size !== 1 || tags.has(null))) {
    throw new Error(`consumeAll needs every subject under one hash tag, got ${checks.map((c) => c.subject).join(', ')}`);
  }
}

/** The hash tag Redis Cluster would hash `subject` by (the first `{...}` with something inside), or null. */
function hashTag(subject: string): string | null {
  const open = subject.indexOf('{');
  const close = open < 0 ? -1 : subject.indexOf('}', open + 1);
  return close > open + 1 ? subject.slice(open + 1, close) : null;
}
