/**
 * ApiKeyService.authenticate through an outage of Quarry's own store: a key the store verified in
 * the last STORE_OUTAGE_GRACE_MS authenticates from memory; nothing else does, and a revocation always wins.
 */
import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import type { ApiKeyRecord } from '../../../../src/repositories/api-key-repository.js';
import type { UserRecord } from '../../../../src/repositories/user-repository.js';
import { hashSecret, mintSecret } from '../../../../src/services/keys/api-key-secrets.js';
import { ApiKeyService, type ApiKeyDeps } from '../../../../src/services/keys/api-key-service.js';
import { KeyCache } from '../../../../src/services/keys/key-cache.js';

class StoreDown extends Error {}
const PEPPER = 'p'.repeat(32);

function keyRecord(publicId: string, secret: string): ApiKeyRecord {
  const at = new Date(0);
  return {
    id: `key_${publicId}`, userId: 'usr_1', name: 'k', kind: 'secret', publicId, secretHash: hashSecret(secret, PEPPER), publishableKey: null,
    allowedOrigins: null, databaseIds: null, tableNames: null, requestsPerIpPerHour: null, environment: 'test', permissions: ['search'],
    tier: 'free', customLimits: null, initialForUser: null, expiresAt: null, revokedAt: null, replacedById: null, lastUsedAt: null,
    usageCount: 0, createdAt: at, updatedAt: at,
  };
}

const user: UserRecord = {
  id: 'usr_1', email: 'a@example.com', name: 'A', passwordHash: 'x', role: 'user', plan: 'free', disabledAt: null,
  lastActiveAt: new Date(0), createdAt: new Date(0), updatedAt: new Date(0),
};

/** A service over an in-memory store that can be taken down, with a clock the test moves. */
function setup() {
  let time = 1_000_000;
  let storeUp = true;
  const keys = new Map<string, ApiKeyRecord>();
  const bus = new MemoryBus();
  const cache = new KeyCache(bus, 5_000, 100, () => time, { graceMs: 60_000, isOutage: (error) => error instanceof StoreDown });
  const reach = <T>(value: T) => (storeUp ? Promise.resolve(value) : Promise.reject(new StoreDown('store down')));
  const service = new ApiKeyService({
    keys: { findByPublicId: (publicId: string) => reach(keys.get(publicId) ?? null) },
    users: { findById: () => reach(user) },
    cache,
    pepper: PEPPER,
    now: () => new Date(time),
  } as unknown as ApiKeyDeps);
  const mint = () => {
    const { secret, publicId } = mintSecret('test');
    keys.set(publicId, keyRecord(publicId, secret));
    return { secret, publicId, revoke: () => keys.set(publicId, { ...keys.get(publicId)!, revokedAt: new Date(time) }) };
  };
  return {
    service, bus, mint,
    tick: (ms: number) => (time += ms),
    down: () => (storeUp = false),
    up: () => (storeUp = true),
  };
}

describe('ApiKeyService.authenticate during a store outage', () => {
  it('when a key was verified less than a minute before the store went down, then it authenticates past the 5-second cache', async () => {
    const { service, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    down();
    tick(59_000);
    expect((await service.authenticate(key.secret)).key.publicId).toBe(key.publicId);
  });

  it('when the store went down more than a minute after the last verification, then the outage is thrown', async () => {
    const { service, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    down();
    tick(60_001);
    await expect(service.authenticate(key.secret)).rejects.toBeInstanceOf(StoreDown);
  });

  it('when a key was never verified by this process, then the outage is thrown', async () => {
    const { service, mint, down } = setup();
    const key = mint();
    down();
    await expect(service.authenticate(key.secret)).rejects.toBeInstanceOf(StoreDown);
  });

  it('when a remembered key is sent with another secret, then it is refused as invalid', async () => {
    const { service, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    down();
    tick(6_000);
    const forged = key.secret.slice(0, -4) + (key.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(service.authenticate(forged)).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
  });

  it('when the key was revoked (the bus says so) before the outage, then it is not remembered', async () => {
    const { service, bus, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    tick(1);
    bus.publish('key', key.publicId);
    down();
    tick(6_000);
    await expect(service.authenticate(key.secret)).rejects.toBeInstanceOf(StoreDown);
  });

  it("when the key's user changed (the bus says so) before the outage, then the key is not remembered", async () => {
    const { service, bus, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    tick(1);
    bus.publish('user', user.id);
    down();
    await expect(service.authenticate(key.secret)).rejects.toBeInstanceOf(StoreDown);
  });

  it('when the store itself answered that the key is revoked (no message reached this process), then the memory of it goes', async () => {
    const { service, mint, tick, down } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    key.revoke();
    tick(6_000); // past the 5-second cache: the store is asked
    await expect(service.authenticate(key.secret)).rejects.toMatchObject({ code: 'KEY_REVOKED' });
    down();
    await expect(service.authenticate(key.secret)).rejects.toBeInstanceOf(StoreDown);
  });
});
