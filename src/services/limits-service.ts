import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import { isoTimestamp } from '../lib/iso-time.js';
import {
  aiRule, aiSubject, concurrencySubject, keySubject, limitsForTier, perHourRule, requestRule, visitorSubject, WINDOW_SECONDS,
  type CustomLimits, type RateLimitDecision, type RateLimitStore, type TierName,
} from '../rate-limit/index.js';
import type { HandlerEnv } from '../api/types.js';
import type { KeyCaller, UserCaller } from './callers.js';
import { requestsPerIp } from './publishable-keys.js';

/** `x-quarry-rate-limit` of an operation in openapi.yaml. */
type OperationLimit = 'exempt' | { scope: 'ip' | 'user'; limit: number } | undefined;

export interface ViolationSink {
  /** A block started (`reason` says which window) or a blocked request was refused (`reason` null). */
  record(keyId: string, decision: RateLimitDecision, at: Date, burstLimit: number): void;
}

export interface LimitsDeps {
  store: RateLimitStore;
  enabled: boolean;
  upgradeUrl: string;
  violations: ViolationSink;
  now?: () => number;
}

const nextTier: Record<TierName, string> = {
  free: 'Upgrade to pro for 10,000 requests per hour.',
  pro: 'Upgrade to enterprise for 100,000 requests per hour.',
  enterprise: 'Contact us for custom limits above the enterprise tier.',
};

const windowText = String(WINDOW_SECONDS);

/** How long a concurrency slot is held at most, should a response never finish (a crashed process). */
const leaseTtlMs = 120_000;

export function keyLimits(key: KeyCaller['key']) {
  return limitsForTier(key.tier, key.customLimits as CustomLimits | null);
}

/** The tier a key is reported under (X-RateLimit-Tier, rate-limit status): `custom` when it has its own limits. */
export function tierLabel(key: KeyCaller['key']): string {
  return key.customLimits ? 'custom' : key.tier;
}

/** What the limiter needs to know about a key, derived from its record. */
interface KeyPlan {
  limits: ReturnType<typeof keyLimits>;
  rule: ReturnType<typeof requestRule>;
  /** X-RateLimit-Tier (tierLabel). */
  tierLabel: string;
  subject: string;
  concurrencySubject: string;
  /** Publishable keys: the per-client-IP limit; null for secret keys. */
  visitorRule: ReturnType<typeof perHourRule> | null;
}

/**
 * Plans by key record, worked out on a key's first request instead of on every one (the limits, rule and subject
 * strings were a good part of the limiter's time per request). A record is a snapshot that is never changed: an
 * update reads a new record (and the key cache drops the old), so a plan can never outlive what it was made from.
 */
const plans = new WeakMap<KeyCaller['key'], KeyPlan>();

function planFor(key: KeyCaller['key']): KeyPlan {
  let plan = plans.get(key);
  if (!plan) {
    const limits = keyLimits(key);
    plan = {
      limits,
      rule: requestRule(limits),
      tierLabel: tierLabel(key),
      subject: keySubject(key.id),
      concurrencySubject: concurrencySubject(key.id),
      visitorRule: key.kind === 'publishable' ? perHourRule(requestsPerIp(key)) : null,
    };
    plans.set(key, plan);
  }
  return plan;
}

/**
 * Applies the spec's Limits section to a request: per-operation limits (per IP or per user), the key's tier
 * limit (sliding hour + burst, with a block), a publishable key's per-client-IP limit, and concurrent requests per
 * key. Every answer sets X-RateLimit-*.
 */
export class LimitsService {
  private readonly now: () => number;
  private lastReset = { ms: NaN, text: '' };

  constructor(private readonly deps: LimitsDeps) {
    this.now = deps.now ?? Date.now;
  }

  async admit(c: Context, env: HandlerEnv): Promise<void> {
    if (!this.deps.enabled) return;
    const declared = (c.operation as unknown as Record<string, unknown>)['x-quarry-rate-limit'] as OperationLimit;
    const nowMs = this.now();
    if (declared && declared !== 'exempt') {
      const user = c.security?.bearerJwt as UserCaller | undefined;
      const scopeId = declared.scope === 'ip' ? `ip:${env.ip}` : `user:${user?.user.id ?? env.ip}`;
      const decision = await this.deps.store.consume(`${scopeId}:${c.operation.operationId}`, perHourRule(declared.limit), nowMs);
      this.refuseOrSetHeaders(env, decision, declared.scope === 'ip' ? 'anonymous' : (env.keyCaller?.key.tier ?? 'free'), null);
    }
    const caller = env.keyCaller;
    if (!caller) return;
    const plan = planFor(caller.key);
    const { limits, rule, tierLabel: tier } = plan;
    if (declared === 'exempt') {
      env.state.rateLimitExempt = true;
      this.setHeaders(env, await this.deps.store.peek(plan.subject, rule, nowMs), tier);
      return;
    }
    // A publishable key's visitor is counted first and, once over, refused before the key's own allowance is touched.
    const visitor = plan.visitorRule ? await this.deps.store.consume(visitorSubject(caller.key.id, env.ip), plan.visitorRule, nowMs) : null;
    if (visitor && !visitor.allowed) this.refuseOrSetHeaders(env, visitor, tier, null);
    const decision = await this.deps.store.consume(plan.subject, rule, nowMs);
    if (!decision.allowed) this.deps.violations.record(caller.key.id, decision, new Date(nowMs), limits.burstLimit);
    // The headers tell whichever limit has less left: for a visitor of a busy site that is the key's, else their own.
    const shown = decision.allowed && visitor && visitor.remaining < decision.remaining ? visitor : decision;
    this.refuseOrSetHeaders(env, shown, tier, caller.key.tier);
    if (limits.concurrentConnections !== null) {
      const subject = plan.concurrencySubject;
      const lease = env.requestId;
      if (!(await this.deps.store.acquireConcurrency(subject, limits.concurrentConnections, lease, nowMs, leaseTtlMs))) {
        throw new AppError('CONCURRENCY_LIMIT_EXCEEDED', `Too many requests in flight: the ${caller.key.tier} tier allows ${limits.concurrentConnections} at once.`, {
          limit: limits.concurrentConnections, tier: caller.key.tier, upgradeUrl: this.deps.upgradeUrl,
        }).withHeaders({ 'Retry-After': '1', 'X-RateLimit-Retry-After': '1' });
      }
      env.state.onDone.push(() => void this.deps.store.releaseConcurrency(subject, lease));
    }
  }

  /** Counts one AI (semantic) request against the key's hourly AI limit; throws 429 when it is used up. */
  async admitAiRequest(caller: KeyCaller): Promise<void> {
    if (!this.deps.enabled) return;
    const { limits } = planFor(caller.key);
    const decision = await this.deps.store.consume(aiSubject(caller.key.id), aiRule(limits), this.now());
    if (!decision.allowed) {
      throw new AppError('AI_RATE_LIMIT_EXCEEDED', `AI request limit exceeded: the ${caller.key.tier} tier allows ${limits.aiRequestsPerHour} semantic searches per hour. Try again in ${decision.retryAfterSeconds} seconds.`, {
        limit: decision.limit, remaining: 0, retryAfter: decision.retryAfterSeconds, tier: caller.key.tier, upgradeUrl: this.deps.upgradeUrl,
      }).withHeaders({ 'Retry-After': String(decision.retryAfterSeconds), 'X-RateLimit-Retry-After': String(decision.retryAfterSeconds) });
    }
  }

  /** The key's current window without consuming (rate-limit status). */
  peek(caller: KeyCaller): Promise<RateLimitDecision> {
    const plan = planFor(caller.key);
    return this.deps.store.peek(plan.subject, plan.rule, this.now());
  }

  private setHeaders(env: HandlerEnv, decision: RateLimitDecision, tier: string): void {
    // A fresh literal (these are the only headers set before a decision is made; a later decision replaces them).
    // Lower-case names (header names are case-insensitive): Node lower-cases every name it is given and again when
    // it writes the head, and a name that already is lower case is used as it is, not copied and looked up anew.
    env.state.responseHeaders = {
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': String(decision.remaining),
      'x-ratelimit-reset': this.resetText(decision.resetAt.getTime()),
      'x-ratelimit-tier': tier,
      'x-ratelimit-window': windowText,
    };
  }

  /** The reset moment as ISO text; a busy key's oldest request (hence its reset) rarely moves between requests. */
  private resetText(ms: number): string {
    if (ms !== this.lastReset.ms) this.lastReset = { ms, text: isoTimestamp(ms) };
    return this.lastReset.text;
  }

  private refuseOrSetHeaders(env: HandlerEnv, decision: RateLimitDecision, tier: string, upgradeFrom: TierName | null): void {
    this.setHeaders(env, decision, tier);
    if (decision.allowed) return;
    const retryAfter = decision.retryAfterSeconds ?? 1;
    env.state.rateLimited = true;
    Object.assign(env.state.responseHeaders, { 'Retry-After': String(retryAfter), 'X-RateLimit-Retry-After': String(retryAfter) });
    throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded. Try again in ${retryAfter} seconds.`, {
      limit: decision.limit,
      remaining: 0,
      resetTime: new Date(this.now() + retryAfter * 1000).toISOString(),
      retryAfter,
      tier,
      windowStart: decision.windowStart.toISOString(),
      upgradeMessage: upgradeFrom ? nextTier[upgradeFrom] : 'Wait for the window to free a slot.',
      upgradeUrl: this.deps.upgradeUrl,
    });
  }
}
