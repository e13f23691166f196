import type { components } from '../../../generated/openapi.js';
import type { RequestUsageRepository } from '../../repositories/request-usage-repository.js';
import { bucketDate, bucketRange, type BucketUnit } from '../../repositories/time-buckets.js';
import type { ViolationRepository } from '../../repositories/violation-repository.js';
import { planOfUser } from '../../rules/plans.js';
import type { KeyCaller } from '../callers.js';
import type { KeyDay, KeyUsageCache } from './key-usage-cache.js';
import { keyLimits, tierLabel, type LimitsService } from './limits-service.js';

type RateLimitStatus = components['schemas']['RateLimitStatus'];
type Analytics = components['schemas']['RateLimitAnalyticsResponse']['data']['analytics'];
type Recommendation = components['schemas']['RateLimitRecommendation'];

const round1 = (value: number) => Math.round(value * 10) / 10;
const hourMs = 3_600_000;

/** The 24 clock hours ending with the one `now` is in, as start and label; they change once an hour, not per call. */
let lastDayHours: { firstHour: number; hours: Array<{ start: number; hour: string }> } | null = null;
function dayHours(now: number): Array<{ start: number; hour: string }> {
  const firstHour = now - (now % hourMs) - 23 * hourMs;
  if (lastDayHours?.firstHour !== firstHour) {
    const hours = Array.from({ length: 24 }, (_, i) => ({ start: firstHour + i * hourMs, hour: new Date(firstHour + i * hourMs).toISOString() }));
    lastDayHours = { firstHour, hours };
  }
  return lastDayHours.hours;
}

/** Timeline resolution and range of each analytics period. */
const periods: Record<Analytics['period'], { unit: BucketUnit; rangeMs: number; pointHours: number }> = {
  hour: { unit: 'minute', rangeMs: hourMs, pointHours: 1 / 60 },
  day: { unit: 'hour', rangeMs: 24 * hourMs, pointHours: 1 },
  week: { unit: 'day', rangeMs: 7 * 24 * hourMs, pointHours: 24 },
};

export interface RateLimitDeps {
  limits: LimitsService;
  logs: RequestUsageRepository;
  violations: ViolationRepository;
  /** Writes buffered usage, so a figure includes the caller's latest requests. */
  flushPending(): Promise<void>;
  /** Whether this process holds counted requests of the key that are not written yet. */
  hasUnwritten(keyId: string): boolean;
  /** Each key's last day as read from the store, until it changes. */
  cache: KeyUsageCache;
  now?: () => number;
}

/** getRateLimitStatus / getRateLimitAnalytics, from the limiter's live window and the recorded requests. */
export class RateLimitService {
  private readonly now: () => number;

  constructor(private readonly deps: RateLimitDeps) {
    this.now = deps.now ?? Date.now;
  }

  async status(caller: KeyCaller): Promise<{ rateLimit: RateLimitStatus }> {
    const limits = keyLimits(caller.key);
    const now = this.now();
    const [decision, account, day] = await Promise.all([
      this.deps.limits.peek(caller), this.deps.limits.peekAccountOf(caller), this.lastDay(caller.key.id, now),
    ]);
    const violations = day.violations.filter((violation) => violation.startedAt.getTime() >= now - 24 * hourMs);
    // The 24 clock hours ending with the current one, empty hours included.
    const admitted = new Map(day.hours.map((row) => [bucketDate(row.bucket).getTime(), row.counted]));
    const last24Hours = dayHours(now).map(({ start, hour }) => {
      const requests = admitted.get(start) ?? 0;
      return { hour, requests, percentOfLimit: round1((100 * requests) / limits.requestsPerHour) };
    });
    const peak = last24Hours.reduce((best, point) => (point.requests > best.requests ? point : best), last24Hours[0]);
    const percentUsed = round1((100 * decision.used) / decision.limit);
    const windowEnd = new Date(now).toISOString();
    return {
      rateLimit: {
        tier: tierLabel(caller.key),
        limits: {
          requestsPerHour: limits.requestsPerHour,
          burstLimit: limits.burstLimit,
          concurrentConnections: limits.concurrentConnections,
          aiRequestsPerHour: limits.aiRequestsPerHour,
        },
        current: {
          requests: decision.used,
          remaining: Math.max(0, decision.limit - decision.used),
          percentUsed,
          windowStart: decision.windowStart.toISOString(),
          windowEnd,
        },
        // The plan's limit over all of the account's keys: a request needs room here as well as in `current`.
        account: {
          plan: planOfUser(caller.user),
          limit: account.limit,
          requests: account.used,
          remaining: Math.max(0, account.limit - account.used),
          percentUsed: round1((100 * account.used) / account.limit),
          windowStart: account.windowStart.toISOString(),
          windowEnd,
          resetTime: account.resetAt.toISOString(),
        },
        usage: {
          last24Hours,
          trends: {
            averageHourlyUsage: round1(last24Hours.reduce((sum, point) => sum + point.requests, 0) / last24Hours.length),
            peakHour: peak.requests > 0 ? peak.hour : null,
            peakUsage: peak.requests,
          },
        },
        recommendations: this.recommend(caller, Math.max(percentUsed, peak.percentOfLimit), violations.length),
      },
    };
  }

  /**
   * The key's admitted requests per hour and its blocks over the day before `now`: the caller's own unwritten
   * requests are written first, then the day comes from the cache unless it changed since it was read.
   */
  private async lastDay(keyId: string, now: number): Promise<KeyDay> {
    if (this.deps.hasUnwritten(keyId)) await this.deps.flushPending();
    const since = new Date(now - 24 * hourMs);
    const cached = this.deps.cache.get(keyId);
    if (cached && cached.since <= since) return cached;
    const readAt = this.deps.cache.clock();
    const [hours, violations] = await Promise.all([
      this.deps.logs.byBucket(keyId, since, 'hour'),
      this.deps.violations.listSince(keyId, since),
    ]);
    const day = { since, hours, violations };
    this.deps.cache.set(keyId, day, readAt);
    return day;
  }

  async analytics(caller: KeyCaller, period: Analytics['period'], includeBreakdown: boolean): Promise<{ analytics: Analytics }> {
    const limits = keyLimits(caller.key);
    const { unit, rangeMs, pointHours } = periods[period];
    const now = this.now();
    const since = new Date(now - rangeMs);
    await this.deps.flushPending();
    const [points, hours, endpoints, violations] = await Promise.all([
      this.deps.logs.byBucket(caller.key.id, since, unit),
      this.deps.logs.byBucket(caller.key.id, since, 'hour'),
      includeBreakdown ? this.deps.logs.byEndpoint(caller.key.id, since, 50) : Promise.resolve([]),
      this.deps.violations.listSince(caller.key.id, since),
    ]);
    const byBucket = new Map(points.map((row) => [row.bucket, row]));
    const pointLimit = limits.requestsPerHour * pointHours;
    const timeline = bucketRange(since, new Date(now), unit).map((bucket) => {
      const requests = byBucket.get(bucket)?.requests ?? 0;
      return {
        timestamp: bucketDate(bucket).toISOString(),
        requests,
        remaining: Math.max(0, Math.round(pointLimit - requests)),
        percentUsed: round1((100 * requests) / pointLimit),
      };
    });
    const totalRequests = hours.reduce((sum, row) => sum + row.requests, 0);
    const limitHits = hours.reduce((sum, row) => sum + row.rateLimited, 0);
    const hourly = bucketRange(since, new Date(now), 'hour').map((bucket) => {
      const row = hours.find((candidate) => candidate.bucket === bucket);
      return row ? (100 * row.counted) / limits.requestsPerHour : 0;
    });
    const peakUsage = round1(Math.max(0, ...hourly));
    return {
      analytics: {
        period,
        summary: {
          totalRequests,
          limitHits,
          averageUsage: round1(hourly.reduce((sum, value) => sum + value, 0) / hourly.length),
          peakUsage,
          efficiency: totalRequests === 0 ? 100 : round1((100 * (totalRequests - limitHits)) / totalRequests),
        },
        timeline,
        endpointBreakdown: endpoints.map((row) => ({
          endpoint: row.endpoint,
          requests: row.requests,
          percentOfTotal: totalRequests === 0 ? 0 : round1((100 * row.requests) / totalRequests),
          averageResponseTime: round1(row.averageMs),
        })),
        limitViolations: violations.map((violation) => ({
          timestamp: violation.startedAt.toISOString(),
          duration: Math.round((violation.blockedUntil.getTime() - violation.startedAt.getTime()) / 1000),
          reason: violation.reason,
          affectedRequests: violation.affectedRequests,
        })),
        recommendations: this.recommend(caller, peakUsage, violations.length),
      },
    };
  }

  /** Stated rules, not canned text: see the operation descriptions in openapi.yaml. */
  private recommend(caller: KeyCaller, peakPercent: number, blocks: number): Recommendation[] {
    const out: Recommendation[] = [];
    const tier = caller.key.tier;
    const next = tier === 'free' ? 'pro (10,000 requests per hour)' : tier === 'pro' ? 'enterprise (100,000 requests per hour)' : null;
    if (blocks > 0) {
      out.push({ type: 'limit_hits', message: `This key was blocked ${blocks} time(s) in this period. Spread requests out or ${next ? `upgrade to ${next}` : 'ask for custom limits'}.`, impact: 'high' });
    }
    if (peakPercent >= 80) {
      out.push({ type: 'upgrade', message: `Usage reached ${peakPercent}% of the hourly limit. ${next ? `Consider ${next}.` : 'Ask for custom limits.'}`, impact: 'medium' });
    }
    if (out.length === 0) out.push({ type: 'info', message: `Usage is well within the ${tier} tier.`, impact: 'low' });
    return out;
  }
}
