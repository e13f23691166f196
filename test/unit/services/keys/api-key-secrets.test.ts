import { describe, expect, it } from 'vitest';
import { hashSecret, keyPrefix, mintSecret, parseSecret, secretMatches } from '../../../../src/services/keys/api-key-secrets.js';

describe('API key secrets', () => {
  it('when minted, then the format is quarry_sk_<env>_ + 52 base62 characters and the prefix holds none of the secret part', () => {
    const { secret, publicId } = mintSecret('live');
    expect(secret).toMatch(/^quarry_sk_live_[A-Za-z0-9]{52}$/);
    const prefix = keyPrefix('live', publicId);
    expect(secret.startsWith(prefix)).toBe(true);
    expect(prefix).toBe(`quarry_sk_live_${publicId}`);
    expect(secret.length - prefix.length).toBe(44);
  });

  it('when minted many times, then no two secrets are equal and characters are spread evenly', () => {
    const secrets = Array.from({ length: 2000 }, () => mintSecret('test').secret.slice(-44));
    expect(new Set(secrets).size).toBe(2000);
    const counts = new Map<string, number>();
    for (const char of secrets.join('')) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2000 * 44) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.2);
  });

  it('when parsed, then only the exact format is accepted', () => {
    const { secret, publicId } = mintSecret('test');
    expect(parseSecret(secret)).toEqual({ kind: 'secret', environment: 'test', publicId });
    const badTag = secret.replace('quarry_sk_', 'quarry_xk_');
    for (const bad of [secret + 'x', secret.slice(0, -1), secret.replace('_test_', '_prod_'), secret.replace(/.$/, '-'), 'quarry_sk_test_', badTag]) {
      expect(parseSecret(bad)).toBeNull();
    }
  });

  it('when a publishable key is minted, then it is quarry_pk_<env>_ + 52 base62 characters and parses as publishable', () => {
    const { secret, publicId } = mintSecret('live', 'publishable');
    expect(secret).toMatch(/^quarry_pk_live_[A-Za-z0-9]{52}$/);
    expect(secret.startsWith(keyPrefix('live', publicId, 'publishable'))).toBe(true);
    expect(keyPrefix('live', publicId, 'publishable')).toBe(`quarry_pk_live_${publicId}`);
    expect(parseSecret(secret)).toEqual({ kind: 'publishable', environment: 'live', publicId });
  });

  it('when hashed with a pepper, then only the same secret and pepper match', () => {
    const { secret } = mintSecret('test');
    const hash = hashSecret(secret, 'p'.repeat(32));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(secretMatches(secret, hash, 'p'.repeat(32))).toBe(true);
    expect(secretMatches(secret, hash, 'q'.repeat(32))).toBe(false);
    expect(secretMatches(mintSecret('test').secret, hash, 'p'.repeat(32))).toBe(false);
  });
});
