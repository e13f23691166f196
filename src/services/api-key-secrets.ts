import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../lib/ids.js';

export type KeyEnvironment = 'live' | 'test';

// quarry_sk_<env>_<8-character public id><44-character secret>: 44 base62 characters carry 261 bits.
const keyPattern = /^quarry_sk_(live|test)_([A-Za-z0-9]{8})([A-Za-z0-9]{44})$/;
export const publicIdLength = 8;

export interface ParsedKey {
  environment: KeyEnvironment;
  publicId: string;
}

export function mintSecret(environment: KeyEnvironment): { secret: string; publicId: string } {
  const publicId = randomBase62(publicIdLength);
  return { secret: `quarry_sk_${environment}_${publicId}${randomBase62(44)}`, publicId };
}

/** The non-secret, identifying head of a key: everything before its random secret part. */
export function keyPrefix(environment: KeyEnvironment, publicId: string): string {
  return `quarry_sk_${environment}_${publicId}`;
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('quarry_sk_');
}

export function parseSecret(token: string): ParsedKey | null {
  const match = keyPattern.exec(token);
  return match ? { environment: match[1] as KeyEnvironment, publicId: match[2] } : null;
}

/** HMAC-SHA-256 with a server pepper: a stolen table of hashes cannot be checked offline without the pepper. */
export function hashSecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string, pepper: string): boolean {
  const actual = Buffer.from(hashSecret(secret, pepper), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
