import type { components } from '../../../generated/openapi.js';
import { AppError } from '../../errors/app-error.js';
import { withTimeout } from '../../lib/timeout.js';
import { serviceVersion } from '../../lib/version.js';
import type { KeyCaller } from '../callers.js';

type Health = components['schemas']['Health'];
type Check = components['schemas']['DependencyCheck'];

export interface HealthDeps {
  storeKind: string;
  pingStore(): Promise<void>;
  /** Null when no Redis is configured (state lives in memory). */
  cache: null | { ping(): Promise<boolean>; lastError(): string | null };
  /** The search index's storage: `kind` for admins (folder, s3, gs, az), `ping` rejects with what the store said. */
  index?: { kind: string; ping(): Promise<void> };
  startedAt: number;
}

/** A check without what is behind it: neither latency nor detail tells an outsider about the infrastructure. */
function publicCheck(check: Check): Check {
  return { status: check.status, latencyMs: null, detail: check.status === 'up' ? 'available' : 'unavailable' };
}

async function timed(probe: () => Promise<boolean>): Promise<{ up: boolean; ms: number; error: string | null }> {
  const started = performance.now();
  try {
    const up = await withTimeout(probe(), 1000, { error: () => new Error('no answer within 1 second') });
    return { up, ms: Math.round(performance.now() - started), error: up ? null : 'the probe was not answered' };
  } catch (error) {
    return { up: false, ms: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * getHealth / getManagementHealth: the store is required (down = unhealthy, 503); Redis is optional (down =
 * degraded: rate limits fall back to this process's memory and the service keeps answering), and so is the search
 * index's storage (down = degraded: searches are answered live, syncs wait).
 */
export class HealthService {
  private checks: { at: number; result: Promise<Health['checks']> } | null = null;

  constructor(private readonly deps: HealthDeps) {}

  /**
   * The dependency checks, run for real at most once a second: concurrent and back-to-back health calls share
   * one probe, so a load balancer polling every instance cannot add load to the store.
   */
  private currentChecks(): Promise<Health['checks']> {
    const now = Date.now();
    if (!this.checks || now - this.checks.at >= 1000) this.checks = { at: now, result: this.probe() };
    return this.checks.result;
  }

  /**
   * The health report. What is behind a check (the store's kind, an address, a driver's error) is for admins only
   * (`detailed`, getManagementHealth with an admin JWT): anyone else learns only whether each dependency is up.
   */
  async report(key: KeyCaller | null, detailed = false): Promise<Health> {
    const probed = await this.currentChecks();
    const checks = detailed ? probed : { store: publicCheck(probed.store), cache: publicCheck(probed.cache), index: publicCheck(probed.index) };
    // The index down is degraded, not unhealthy: searches are answered live by each database meanwhile.
    const status = checks.store.status === 'down' ? 'unhealthy' : checks.cache.status === 'down' || checks.index.status === 'down' ? 'degraded' : 'healthy';
    const health: Health = {
      status,
      version: serviceVersion,
      uptimeSeconds: Math.floor((Date.now() - this.deps.startedAt) / 1000),
      authenticated: key !== null,
      keyInfo: key ? { tier: key.key.tier, permissions: key.key.permissions } : null,
      checks,
    };
    if (status === 'unhealthy') {
      throw new AppError('SERVICE_UNAVAILABLE', 'The service is unhealthy: store is down.', { status, checks });
    }
    return health;
  }

  private async probe(): Promise<Health['checks']> {
    const store = await timed(async () => (await this.deps.pingStore(), true));
    const storeCheck: Check = { status: store.up ? 'up' : 'down', latencyMs: store.up ? store.ms : null, detail: store.up ? this.deps.storeKind : `${this.deps.storeKind}: ${store.error}` };
    let cacheCheck: Check = { status: 'up', latencyMs: 0, detail: 'memory' };
    if (this.deps.cache) {
      const cache = this.deps.cache;
      const redis = await timed(() => cache.ping());
      cacheCheck = redis.up
        ? { status: 'up', latencyMs: redis.ms, detail: 'redis' }
        : { status: 'down', latencyMs: null, detail: `redis unreachable (${cache.lastError() ?? redis.error}): rate limits fall back to this process` };
    }
    let indexCheck: Check = { status: 'up', latencyMs: 0, detail: 'none' };
    if (this.deps.index) {
      const index = this.deps.index;
      const probed = await timed(async () => (await index.ping(), true));
      indexCheck = probed.up
        ? { status: 'up', latencyMs: probed.ms, detail: index.kind }
        : { status: 'down', latencyMs: null, detail: `${index.kind} unreachable (${probed.error}): searches are answered live, syncs wait` };
    }
    return { store: storeCheck, cache: cacheCheck, index: indexCheck };
  }
}
