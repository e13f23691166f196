import { AppError } from '../../errors/app-error.js';
import {
  accountSubject, aiRule, aiSubject, concurrencySubject, keySubject, limitsForTier, perHourRule, requestRule, TIERS, visitorSubject,
  WINDOW_SECONDS, type CustomLimits, type LimitCheck, type RateLimitDecision, type RateLimitStore, type RateLimitWindow, type TierName,
} from '../../rate-limit/index.js';
import { planOfUser } from '../../rules/plans.js';
import type { KeyCaller } from '../callers.js';
import { requestsPerIp } from '../../rules/key-scope.js';

/**
 * An operation's own limit (openapi.yaml `x-quarry-rate-limit`): exempt from the key's limit, or n per hour. Answers
 * with an `uncounted` status give their try back: a registration refused as invalid must not cost a typo one.
 */
export type OperationLimit = 'exempt' | { scope: 'ip' | 'user'; limit: number; uncounted?: number[] } | undefined;

/** One request as the limiter sees it: who asks, for which operation. */
export interface LimitRequest {
  operationId: string;
  operationLimit: OperationLimit;
  /** The client's address, for per-IP limits. */
  ip: string;
  /** The JWT caller's user id, for per-user limits. */
  userId: string | null;
  key: KeyCaller | null;
  /** Unique per request: names the request's concurrency slot. */
  requestId: string;
}

/** What an admitted request is told. */
export interface Admission {
  /** The window to report to the caller, or null when no limit applies. */
  window: RateLimitWindow | null;
  /** Whether the request counts against the key's limit (exempt operations do not). */
  counted: boolean;
  /** Frees the request's concurrency slot: call it once the response is done. Null when none was taken. */
  release: (() => void) | null;
  /** Takes the request back from its operation's own limit: call it when the answer is one that does not count. */
  refund: (() => Promise<void>) | null;
}

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

/** How long a concurrency slot is held at most, should a response never finish (a crashed process). */
const leaseTtlMs = 120_000;

export function keyLimits(key: KeyCaller['key']) {
  return limitsForTier(key.tier, key.customLimits as CustomLimits | null);
}

/** The tier a key is reported under (X-RateLimit-Tier, rate-limit status): `custom` when it has its own limits. */
export function tierLabel(key: KeyCaller['key']): string {
  return key.customLimits ? 'custom' : key.tier;
}

/**
 * Which limit refused a request (429 `details.scope`): a per-operation limit, a publishable key's visitor (client
 * IP), the key's tier, or the account's plan counted over all of its keys.
 */
export type LimitScope = 'operation' | 'visitor' | 'key' | 'account';

/**
 * The account's own limit: its plan's requests per hour over every key it holds, in the same sliding hour as a
 * key's (spec: Limits). Without it an account's allowance would multiply with the keys it mints.
 */
export function accountRule(caller: KeyCaller) {
  return perHourRule(TIERS[planOfUser(caller.user)].requestsPerHour);
}

const accountCheck = (caller: KeyCaller): LimitCheck => ({ subject: accountSubject(caller.user.id), rule: accountRule(caller) });
const keyCheck = (caller: KeyCaller): LimitCheck => ({ subject: keySubject(caller.user.id, caller.key.id), rule: requestRule(keyLimits(caller.key)) });

/** The decision with the least left, the key's on a tie: what the X-RateLimit-* headers report. */
const tightest = (own: RateLimitDecision, others: RateLimitDecision[]) =>
  others.reduce((least, d) => (d.remaining < least.remaining ? d : least), own);

const windowOf = (decision: RateLimitDecision, tier: string): RateLimitWindow => ({
  limit: decision.limit,
  remaining: decision.remaining,
  resetAt: decision.resetAt,
  tier,
  windowSeconds: WINDOW_SECONDS,
});

/**
 * Applies the spec's Limits section to a request: per-operation limits (per IP or per user), the key's tier
 * limit (sliding hour + burst, with a block), a publishable key's per-client-IP limit, and concurrent requests per
 * key. Refusals are AppErrors that carry
 * the window and when to retry; the web layer turns both into headers.
 */
export class LimitsService {
  private readonly now: () => number;

  constructor(private readonly deps: LimitsDeps) {
    this.now = deps.now ?? Date.now;
  }

  async admit(request: LimitRequest): Promise<Admission> {
    const { operationLimit, key } = request;
    const admission: Admission = { window: null, counted: operationLimit !== 'exempt', release: null, refund: null };
    if (!this.deps.enabled) return admission;
    const nowMs = this.now();
    if (operationLimit && operationLimit !== 'exempt') {
      const scopeId = operationLimit.scope === 'ip' ? `ip:${request.ip}` : `user:${request.userId ?? request.ip}`;
      const subject = `${scopeId}:${request.operationId}`;
      const decision = await this.deps.store.consume(subject, perHourRule(operationLimit.limit), nowMs);
      const tier = operationLimit.scope === 'ip' ? 'anonymous' : (key?.key.tier ?? 'free');
      admission.window = this.admitted(decision, tier, null, 'operation');
      admission.refund = () => this.deps.store.refund(subject, nowMs);
    }
    if (!key) return admission;
    const limits = keyLimits(key.key);
    const tier = tierLabel(key.key);
    if (operationLimit === 'exempt') {
      const [own, account] = await Promise.all([this.peekKey(key, nowMs), this.peekAccount(key, nowMs)]);
      admission.window = windowOf(tightest(own, [account]), tier);
      return admission;
    }
    // One atomic decision over every limit the request counts against: counted in all of them, or in none.
    const checks: { scope: LimitScope; check: LimitCheck }[] = [
      ...(key.key.kind === 'publishable'
        ? [{ scope: 'visitor' as const, check: { subject: visitorSubject(key.user.id, key.key.id, request.ip), rule: perHourRule(requestsPerIp(key.key)) } }]
        : []),
      { scope: 'key', check: keyCheck(key) },
      { scope: 'account', check: accountCheck(key) },
    ];
    const result = await this.deps.store.consumeAll(checks.map((c) => c.check), nowMs);
    const own = result.decisions[checks.findIndex((c) => c.scope === 'key')]!;
    if (!own.allowed) this.deps.violations.record(key.key.id, own, new Date(nowMs), limits.burstLimit);
    if (result.refusedBy !== null) {
      const refused = result.decisions.filter((d) => !d.allowed);
      // Retry-After is the latest of the refusing limits', so a client that obeys it is not refused again.
      const retryAfterSeconds = Math.max(...refused.map((d) => d.retryAfterSeconds ?? 1));
      const scope = checks[result.refusedBy]!.scope;
      this.admitted({ ...result.decisions[result.refusedBy]!, retryAfterSeconds }, tier, key.key.tier, scope, key);
    }
    // The window shown is whichever limit has less left: the visitor's, the key's or the account's.
    admission.window = windowOf(tightest(own, result.decisions), tier);
    if (limits.concurrentConnections !== null) {
      const subject = concurrencySubject(key.key.id);
      const lease = request.requestId;
      if (!(await this.deps.store.acquireConcurrency(subject, limits.concurrentConnections, lease, nowMs, leaseTtlMs))) {
        throw new AppError('CONCURRENCY_LIMIT_EXCEEDED', `Too many requests in flight: the ${key.key.tier} tier allows ${limits.concurrentConnections} at once.`, {
          limit: limits.concurrentConnections, tier: key.key.tier, upgradeUrl: this.deps.upgradeUrl,
        }, { retryAfterSeconds: 1, rateLimit: admission.window });
      }
      admission.release = () => void this.deps.store.releaseConcurrency(subject, lease);
    }
    return admission;
  }

  /** Counts one AI (semantic) request against the key's hourly AI limit; refuses with AI_RATE_LIMIT_EXCEEDED when it is used up. */
  async admitAiRequest(caller: KeyCaller): Promise<void> {
    if (!this.deps.enabled) return;
    const limits = keyLimits(caller.key);
    const decision = await this.deps.store.consume(aiSubject(caller.key.id), aiRule(limits), this.now());
    if (!decision.allowed) {
      const retryAfterSeconds = decision.retryAfterSeconds ?? 1;
      throw new AppError('AI_RATE_LIMIT_EXCEEDED', `AI request limit exceeded: the ${caller.key.tier} tier allows ${limits.aiRequestsPerHour} semantic searches per hour. Try again in ${retryAfterSeconds} seconds.`, {
        limit: decision.limit, remaining: 0, retryAfter: retryAfterSeconds, tier: caller.key.tier, upgradeUrl: this.deps.upgradeUrl,
      }, { retryAfterSeconds });
    }
  }

  /** The key's current window without consuming (rate-limit status). */
  peek(caller: KeyCaller): Promise<RateLimitDecision> {
    return this.peekKey(caller, this.now());
  }

  /** The account's current window over all of its keys, without consuming (rate-limit status). */
  peekAccountOf(caller: KeyCaller): Promise<RateLimitDecision> {
    return this.peekAccount(caller, this.now());
  }

  private peekKey(caller: KeyCaller, nowMs: number): Promise<RateLimitDecision> {
    const { subject, rule } = keyCheck(caller);
    return this.deps.store.peek(subject, rule, nowMs);
  }

  private peekAccount(caller: KeyCaller, nowMs: number): Promise<RateLimitDecision> {
    const { subject, rule } = accountCheck(caller);
    return this.deps.store.peek(subject, rule, nowMs);
  }

  /** The window of an admitted request; a refused one becomes RATE_LIMIT_EXCEEDED with the window and when to retry. */
  private admitted(
    decision: RateLimitDecision, tier: string, upgradeFrom: TierName | null, scope: LimitScope, caller?: KeyCaller,
  ): RateLimitWindow {
    const window = windowOf(decision, tier);
    if (decision.allowed) return window;
    const retryAfter = decision.retryAfterSeconds ?? 1;
    const plan = caller ? planOfUser(caller.user) : null;
    throw new AppError('RATE_LIMIT_EXCEEDED', `${refusalOf(scope, decision.limit, plan)} Try again in ${retryAfter} seconds.`, {
      scope,
      limit: decision.limit,
      remaining: 0,
      resetTime: new Date(this.now() + retryAfter * 1000).toISOString(),
      retryAfter,
      tier,
      windowStart: decision.windowStart.toISOString(),
      upgradeMessage: scope === 'account' && plan ? nextTier[plan] : upgradeFrom ? nextTier[upgradeFrom] : 'Wait for the window to free a slot.',
      upgradeUrl: this.deps.upgradeUrl,
    }, { retryAfterSeconds: retryAfter, rateLimit: window });
  }
}

/** The first sentence of a 429's message: which limit was reached. */
function refusalOf(scope: LimitScope, limit: number, plan: TierName | null): string {
  if (scope === 'account') return `Account rate limit exceeded: the ${plan} plan allows ${limit} requests per hour across all of the account's keys.`;
  if (scope === 'visitor') return `Rate limit exceeded for this client IP: this publishable key allows each visitor ${limit} requests per hour.`;
  return 'Rate limit exceeded.';
}
