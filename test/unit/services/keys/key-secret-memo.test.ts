/**
 * ApiKeyService.authenticate while a key is cached (5 s): the secret that matched the stored hash is compared in
 * constant time instead of hashed again, and nothing else passes for it.
 */
import { describe, expect, it, vi } from 'vitest';
import { forgedFrom, setup } from './support.js';

const hmac = vi.hoisted(() => ({ calls: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return { ...crypto, createHmac: (...args: Parameters<typeof crypto.createHmac>) => ((hmac.calls += 1), crypto.createHmac(...args)) };
});

describe('ApiKeyService.authenticate with a cached key', () => {
  it('when the same secret comes again within the cache, then it authenticates without another HMAC', async () => {
    const { service, mint, tick } = setup();
    const key = mint();
    hmac.calls = 0; // minting hashed the secret once
    await service.authenticate(key.secret);
    expect(hmac.calls).toBe(1);
    tick(4_000);
    for (let i = 0; i < 3; i++) expect((await service.authenticate(key.secret)).key.publicId).toBe(key.publicId);
    expect(hmac.calls).toBe(1);
  });

  it('when another secret comes with the cached key\'s public id, then it is refused as invalid', async () => {
    const { service, mint } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    await expect(service.authenticate(forgedFrom(key.secret))).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
    expect((await service.authenticate(key.secret)).key.publicId).toBe(key.publicId);
  });

  it('when another secret comes first, then the right one still authenticates and the wrong one never does', async () => {
    const { service, mint } = setup();
    const key = mint();
    await expect(service.authenticate(forgedFrom(key.secret))).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
    expect((await service.authenticate(key.secret)).key.publicId).toBe(key.publicId);
    await expect(service.authenticate(forgedFrom(key.secret))).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
  });

  it('when the cache entry has expired, then the store is read and the secret is hashed again', async () => {
    const { service, mint, tick } = setup();
    const key = mint();
    hmac.calls = 0;
    await service.authenticate(key.secret);
    tick(5_001);
    await service.authenticate(key.secret);
    expect(hmac.calls).toBe(2);
  });

  it('when the key is revoked (the bus says so), then the next request is refused however recently its secret matched', async () => {
    const { service, bus, mint } = setup();
    const key = mint();
    await service.authenticate(key.secret);
    key.revoke();
    bus.publish('key', key.publicId);
    await expect(service.authenticate(key.secret)).rejects.toMatchObject({ code: 'KEY_REVOKED' });
  });
});
