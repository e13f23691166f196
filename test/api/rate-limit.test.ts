import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestUser } from '../support/factories.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** The rate limits run on this clock, so blocks can expire and windows slide without sleeping. */
let clock = Date.now();
let t: TestServer;
let user: TestUser;
beforeAll(async () => {
  t = await startTestServer({}, { now: () => clock });
  user = await registerUser(t.client);
  await grantPlan(t, user, 'pro');
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const consume = (secret: string) => t.client.get('/api/v1/rate-limit/analytics', { token: secret });
const status = (secret: string) => t.client.get('/api/v1/rate-limit/status', { token: secret });

describe('X-RateLimit headers', () => {
  it('when a key makes a request, then every response carries the five headers with the tier limit', async () => {
    const key = await createKey(t.client, user, { rateLimitTier: 'pro' });
    const res = await consume(key.secret);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9999');
    expect(res.headers.get('x-ratelimit-tier')).toBe('pro');
    expect(res.headers.get('x-ratelimit-window')).toBe('3600');
    expect(new Date(res.headers.get('x-ratelimit-reset')!).getTime()).toBeGreaterThan(clock);
    const invalid = await t.client.get('/api/v1/rate-limit/analytics?period=year', { token: key.secret });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('x-ratelimit-remaining')).toBe('9998');
  });
});

describe('burst limit and block', () => {
  it('when a free key sends its 51st request within 60 s, then 429 with the spec body and headers, for 5 minutes', async () => {
    const key = await createKey(t.client, user, { rateLimitTier: 'free' });
    const statuses = [];
    for (let i = 0; i < 50; i += 1) statuses.push((await consume(key.secret)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const blocked = await consume(key.secret);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      message: 'Rate limit exceeded. Try again in 300 seconds.',
      details: { limit: 1000, remaining: 0, retryAfter: 300, tier: 'free', upgradeUrl: expect.stringMatching(/^https?:/) },
    });
    expect(blocked.body.error.details).toHaveProperty('upgradeMessage');
    expect(new Date(blocked.body.error.details.resetTime).getTime()).toBe(clock + 300_000);
    expect(new Date(blocked.body.error.details.windowStart).getTime()).toBe(clock - 3_600_000);
    for (const [name, value] of Object.entries({ 'retry-after': '300', 'x-ratelimit-retry-after': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '1000', 'x-ratelimit-tier': 'free' })) {
      expect(blocked.headers.get(name), name).toBe(value);
    }

    clock += 100_000;
    const stillBlocked = await consume(key.secret);
    expect(stillBlocked.status).toBe(429);
    expect(stillBlocked.headers.get('retry-after')).toBe('200');

    const during = await status(key.secret);
    expect(during.status).toBe(200);
    expect(during.body.data.rateLimit.current.requests).toBe(50);

    clock += 200_000;
    expect((await consume(key.secret)).status).toBe(200);
  });

  it('when blocks happened, then rate-limit analytics lists them with duration and refused requests', async () => {
    const key = await createKey(t.client, user, { rateLimitTier: 'free' });
    for (let i = 0; i < 50; i += 1) await consume(key.secret);
    expect((await consume(key.secret)).status).toBe(429);
    expect((await consume(key.secret)).status).toBe(429);
    clock += 301_000;
    await t.server.services.violations.drain();
    const res = await t.client.get('/api/v1/rate-limit/analytics?period=day&includeBreakdown=true', { token: key.secret });
    expect(res.status).toBe(200);
    const analytics = res.body.data.analytics;
    expect(analytics.limitViolations).toEqual([
      expect.objectContaining({ duration: 300, affectedRequests: 2, reason: 'burst limit of 50 requests per 60 seconds exceeded' }),
    ]);
    expect(analytics.summary).toMatchObject({ totalRequests: 52, limitHits: 2 });
    expect(analytics.summary.efficiency).toBeCloseTo(96.2, 1);
    expect(analytics.endpointBreakdown[0]).toMatchObject({ endpoint: 'GET /api/v1/rate-limit/analytics', requests: 52 });
    expect(analytics.timeline).toHaveLength(25);
    expect(analytics.recommendations[0].type).toBe('limit_hits');
  });
});

describe('hourly sliding window', () => {
  it('when the hourly limit is reached, then requests are refused until the oldest leaves the window', async () => {
    const key = await createKey(t.client, user, { rateLimitTier: 'free' });
    // 1,000 requests spread as 20 per simulated minute, never crossing the burst limit of 50/60 s.
    for (let minute = 0; minute < 50; minute += 1) {
      for (let i = 0; i < 20; i += 1) expect((await consume(key.secret)).status).toBe(200);
      clock += 60_000;
    }
    const full = await consume(key.secret);
    expect(full.status).toBe(429);
    expect(full.body.error.details.limit).toBe(1000);
    const retryAfter = Number(full.headers.get('retry-after'));
    clock += retryAfter * 1000;
    expect((await consume(key.secret)).status).toBe(200);
  }, 120_000);
});

describe('getRateLimitStatus', () => {
  it('when called, then it does not consume a request and reports the live window and the last 24 hours', async () => {
    // A fresh account: the headers report the account's window whenever it has less left than the key's.
    const own = await registerUser(t.client);
    await grantPlan(t, own, 'pro');
    const key = await createKey(t.client, own, { rateLimitTier: 'pro' });
    for (let i = 0; i < 3; i += 1) await consume(key.secret);
    const first = await status(key.secret);
    const second = await status(key.secret);
    expect(second.body.data.rateLimit.current).toMatchObject({ requests: 3, remaining: 9997 });
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9997');
    const rateLimit = second.body.data.rateLimit;
    expect(rateLimit.limits).toEqual({ requestsPerHour: 10000, burstLimit: 200, concurrentConnections: 10, aiRequestsPerHour: 2000 });
    expect(rateLimit.usage.last24Hours).toHaveLength(24);
    expect(rateLimit.usage.last24Hours.at(-1).requests).toBe(3);
    expect(rateLimit.usage.trends.peakUsage).toBe(3);
    expect(rateLimit.account).toMatchObject({ plan: 'pro', limit: 10000, requests: 3, remaining: 9997, percentUsed: 0 });
  });
});

describe('account limit across keys', () => {
  it('when a free account spreads requests over two keys, then it gets its plan\'s 1,000 per hour in total and the 429 says scope account', async () => {
    const free = await registerUser(t.client);
    const [a, b] = [await createKey(t.client, free), await createKey(t.client, free)];
    // 25 per key per simulated minute stays under each key's burst limit of 50/60 s; 20 minutes make 1,000.
    for (let minute = 0; minute < 20; minute += 1) {
      for (let i = 0; i < 25; i += 1) {
        expect((await consume(a.secret)).status).toBe(200);
        expect((await consume(b.secret)).status).toBe(200);
      }
      clock += 60_000;
    }
    const refused = await consume(a.secret);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { scope: 'account', limit: 1000, remaining: 0, tier: 'free' },
    });
    expect(refused.body.error.message).toMatch(/account/);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // The oldest of the account's requests leaves the window 40 minutes from now (it was made 20 minutes ago).
    expect(Number(refused.headers.get('retry-after'))).toBe(2400);

    // Each key on its own has used only half of its 1,000: the status says where the limit is.
    const report = await status(b.secret);
    expect(report.body.data.rateLimit.current).toMatchObject({ requests: 500, remaining: 500 });
    expect(report.body.data.rateLimit.account).toMatchObject({ plan: 'free', limit: 1000, requests: 1000, remaining: 0 });
    expect(report.headers.get('x-ratelimit-remaining')).toBe('0');

    clock += 2_400_000;
    expect((await consume(b.secret)).status).toBe(200);
  }, 120_000);

  it('when one key has used part of the account\'s allowance, then another key\'s headers report what the account has left', async () => {
    const free = await registerUser(t.client);
    const [a, b] = [await createKey(t.client, free), await createKey(t.client, free)];
    for (let i = 0; i < 10; i += 1) await consume(a.secret);
    const res = await consume(b.secret);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('989');
  });

  it('when a single key crosses its own limit, then the 429 says scope key', async () => {
    const free = await registerUser(t.client);
    const key = await createKey(t.client, free);
    for (let i = 0; i < 50; i += 1) await consume(key.secret);
    const blocked = await consume(key.secret);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.details.scope).toBe('key');
  });
});
