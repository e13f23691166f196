import { randomBytes } from 'node:crypto';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform random base62 string (rejection sampling, so no character is favoured). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += alphabet[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Stripe-style prefixed identifier: `usr_…`, `key_…`, `db_…`, 22 base62 characters (131 bits). */
export function newId(prefix: 'usr' | 'key' | 'db' | 'ses' | 'srch' | 'req' | 'itb' | 'ijob' | 'upl' | 'sqf' | 'poll'): string {
  return `${prefix}_${randomBase62(22)}`;
}
