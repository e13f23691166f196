import { describe, expect, it } from 'vitest';
import { HealthService } from '../../../../src/services/health/health-service.js';

const base = { storeKind: 'sqlite', startedAt: Date.now() - 5000 };

describe('HealthService', () => {
  it('when the store and Redis answer, then healthy', async () => {
    const health = new HealthService({ ...base, pingStore: async () => {}, cache: { ping: async () => true, lastError: () => null } });
    expect(await health.report(null, true)).toMatchObject({ status: 'healthy', authenticated: false, keyInfo: null, checks: { store: { status: 'up' }, cache: { status: 'up', detail: 'redis' } } });
  });

  it('when Redis is down, then degraded, and the reason is given', async () => {
    const health = new HealthService({ ...base, pingStore: async () => {}, cache: { ping: async () => false, lastError: () => 'connect ECONNREFUSED' } });
    const report = await health.report(null, true);
    expect(report.status).toBe('degraded');
    expect(report.checks.cache.detail).toContain('ECONNREFUSED');
  });

  it('when anyone but an admin asks, then each check says only up or down: no kind, latency or error', async () => {
    const health = new HealthService({ ...base, storeKind: 'postgres', pingStore: async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:5499'); }, cache: { ping: async () => false, lastError: () => 'connect ECONNREFUSED 10.0.0.7:6379' } });
    const refusal = await health.report(null).catch((error: { details: unknown }) => error.details);
    expect(refusal).toEqual({
      status: 'unhealthy',
      checks: {
        store: { status: 'down', latencyMs: null, detail: 'unavailable' }, cache: { status: 'down', latencyMs: null, detail: 'unavailable' },
        index: { status: 'up', latencyMs: null, detail: 'available' },
      },
    });
    expect(JSON.stringify(refusal)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|redis/);
    const forAdmin = await health.report(null, true).catch((error: { details: { checks: { store: { detail: string } } } }) => error.details);
    expect(forAdmin.checks.store.detail).toBe('postgres: connect ECONNREFUSED 127.0.0.1:5499');
  });

  it("when the index's storage is down, then degraded (searches are answered live), and only an admin learns why", async () => {
    const index = { kind: 's3', ping: async () => { throw new Error('Generic S3 error: connection refused'); } };
    const health = new HealthService({ ...base, pingStore: async () => {}, cache: null, index });
    const report = await health.report(null);
    expect(report).toMatchObject({ status: 'degraded', checks: { store: { status: 'up' }, index: { status: 'down', latencyMs: null, detail: 'unavailable' } } });
    const forAdmin = await new HealthService({ ...base, pingStore: async () => {}, cache: null, index }).report(null, true);
    expect(forAdmin.checks.index.detail).toContain('s3 unreachable (Generic S3 error: connection refused)');
  });

  it('when the store is down, then 503 SERVICE_UNAVAILABLE with the report in details', async () => {
    const health = new HealthService({ ...base, pingStore: async () => { throw new Error('connection refused'); }, cache: null });
    await expect(health.report(null, true)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { status: 'unhealthy', checks: { store: { status: 'down', detail: 'sqlite: connection refused' } } },
    });
  });

  it('when the store hangs, then it counts as down after a second', async () => {
    const health = new HealthService({ ...base, pingStore: () => new Promise(() => {}), cache: null });
    await expect(health.report(null)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
