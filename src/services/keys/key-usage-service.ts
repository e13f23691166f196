import type { components, operations } from '../../../generated/openapi.js';
import type { RequestUsageRepository } from '../../repositories/request-usage-repository.js';
import { bucketDate } from '../../repositories/time-buckets.js';
import type { ApiKeyService } from './api-key-service.js';
import type { UserCaller } from '../callers.js';
import type { LimitsService } from '../rate-limit/limits-service.js';

type KeyUsage = components['schemas']['KeyUsage'];
type UsageQuery = NonNullable<operations['getApiKeyUsage']['parameters']['query']>;

const round1 = (value: number) => Math.round(value * 10) / 10;

/** getApiKeyUsage: computed from the key's recorded requests (spec: Key usage record). */
export class KeyUsageService {
  constructor(
    private readonly deps: { keys: ApiKeyService; logs: RequestUsageRepository; limits: Pick<LimitsService, 'peek'>; flushPending(): Promise<void> },
  ) {}

  async usage(caller: UserCaller, keyId: string, query: UsageQuery): Promise<{ usage: KeyUsage }> {
    const key = await this.deps.keys.owned(caller, keyId);
    const days = query.days ?? 7;
    const period = query.period ?? 'hour';
    const limit = query.limit ?? 100;
    // Read-your-writes: what this process has buffered is counted too.
    await this.deps.flushPending();
    const since = new Date(Date.now() - days * 86_400_000);
    const [totals, endpoints, buckets, window] = await Promise.all([
      this.deps.logs.totals(key.id, since),
      this.deps.logs.byEndpoint(key.id, since, 10),
      this.deps.logs.byBucket(key.id, since, period),
      this.deps.limits.peek({ kind: 'key', key, user: caller.user }),
    ]);
    return {
      usage: {
        keyId: key.id,
        period,
        days,
        totalRequests: totals.total,
        successfulRequests: totals.total - totals.failed,
        failedRequests: totals.failed,
        averageResponseTime: Math.round(totals.averageMs),
        topEndpoints: endpoints.map((row) => ({ endpoint: row.endpoint, requests: row.requests, averageResponseTime: round1(row.averageMs) })),
        hourlyBreakdown: buckets.slice(-limit).map((row) => ({
          hour: bucketDate(row.bucket).toISOString(),
          requests: row.requests,
          averageResponseTime: round1(row.averageMs),
        })),
        allowance: { limit: window.limit, used: window.used, remaining: Math.max(0, window.limit - window.used), resetAt: window.resetAt.toISOString() },
      },
    };
  }
}
