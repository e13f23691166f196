import { describe, expect, it } from 'vitest';
import { HealthService } from '../../../src/services/health-service.js';

const base = { storeKind: 'sqlite', startedAt: Date.now() - 5000 };

describe('HealthService', () => {
  it('when the store and Redis answer, then healthy', async () => {
    const health = new HealthService({ ...base, pingStore: async () => {}, cache: { ping: async () => true, lastError: () => null } });
    expect(await health.report(null)).toMatchObject({ status: 'healthy', authenticated: false, keyInfo: null, checks: { store: { status: 'up' }, cache: { status: 'up', detail: 'redis' } } });
  });

  it('when Redis is down, then degraded, and the reason is given', async () => {
    const health = new HealthService({ ...base, pingStore: async () => {}, cache: { ping: async () => false, lastError: () => 'connect ECONNREFUSED' } });
    const report = await health.report(null);
    expect(report.status).toBe('degraded');
    expect(report.checks.cache.detail).toContain('ECONNREFUSED');
  });

  it('when the store is down, then 503 SERVICE_UNAVAILABLE with the report in details', async () => {
    const health = new HealthService({ ...base, pingStore: async () => { throw new Error('connection refused'); }, cache: null });
    await expect(health.report(null)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      details: { status: 'unhealthy', checks: { store: { status: 'down', detail: 'sqlite: connection refused' } } },
    });
  });

  it('when the store hangs, then it counts as down after a second', async () => {
    const health = new HealthService({ ...base, pingStore: () => new Promise(() => {}), cache: null });
    await expect(health.report(null)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
