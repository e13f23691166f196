/**
 * ApiKeyService.authenticate through an outage of Quarry's own store: a key the store verified in
 * the last STORE_OUTAGE_GRACE_MS authenticates from memory; nothing else does, and a revocation always wins.
 */
import { describe, expect, it } from 'vitest';
import { forgedFrom, setup, StoreDown, user } from './support.js';

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
    await expect(service.authenticate(forgedFrom(key.secret))).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
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
