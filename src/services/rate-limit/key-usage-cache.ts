import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import { OwnedCache } from '../../lib/owned-cache.js';
import type { BucketRow } from '../../repositories/request-usage-repository.js';
import type { ViolationRecord } from '../../repositories/violation-repository.js';

/** Bus topic: a key's counted requests or limit violations in the store changed; the id is the key id. */
export const KEY_USAGE_TOPIC = 'key-usage';

/** A key's last day as the store had it: admitted requests per hour and the blocks that started since `since`. */
export interface KeyDay {
  since: Date;
  hours: BucketRow[];
  violations: ViolationRecord[];
}

/**
 * The last day of each key's usage (getRateLimitStatus), so a client polling its status does not read the store on
 * every call. An entry goes the moment more of the key's counted requests or a violation is written, in every
 * process (invalidation bus); the service flushes this process's unwritten counts first. Read later, a day only
 * needs its older hours cut: what was read covers every hour that is still shown. `ttlMs` bounds staleness should a
 * message be lost.
 */
export class KeyUsageCache {
  private readonly days: OwnedCache<KeyDay>;

  constructor(
    private readonly bus: InvalidationBus,
    ttlMs: number,
    max = 50_000,
    now: () => number = Date.now,
  ) {
    this.days = new OwnedCache({ max, ttlMs, now });
    bus.subscribe(KEY_USAGE_TOPIC, (keyId) => this.days.invalidate(keyId));
  }

  clock(): number {
    return this.days.now();
  }

  get(keyId: string): KeyDay | null {
    return this.days.get(keyId) ?? null;
  }

  set(keyId: string, day: KeyDay, readAt: number): void {
    this.days.set(keyId, day, [keyId], readAt);
  }

  /** The key's counted requests or violations were written: every process reads them again. */
  changed(keyId: string): void {
    this.bus.publish(KEY_USAGE_TOPIC, keyId);
  }
}
