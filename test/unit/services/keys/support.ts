/** An ApiKeyService over an in-memory store that can be taken down, with a clock the test moves. */
import { MemoryBus } from '../../../../src/lib/invalidation-bus.js';
import type { ApiKeyRecord } from '../../../../src/repositories/api-key-repository.js';
import type { UserRecord } from '../../../../src/repositories/user-repository.js';
import { hashSecret, mintSecret } from '../../../../src/services/keys/api-key-secrets.js';
import { ApiKeyService, type ApiKeyDeps } from '../../../../src/services/keys/api-key-service.js';
import { KeyCache } from '../../../../src/services/keys/key-cache.js';

export class StoreDown extends Error {}
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

export const user: UserRecord = {
  id: 'usr_1', email: 'a@example.com', name: 'A', passwordHash: 'x', role: 'user', plan: 'free', disabledAt: null,
  lastActiveAt: new Date(0), createdAt: new Date(0), updatedAt: new Date(0),
};

/** Keys are cached 5 s and remembered through an outage for 60 s. */
export function setup() {
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

/** The same secret with its last four characters changed: the key's public id, another secret. */
export function forgedFrom(secret: string): string {
  return secret.slice(0, -4) + (secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
}
