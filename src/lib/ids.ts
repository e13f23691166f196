import { randomFillSync } from 'node:crypto';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Random bytes drawn from the system's generator 4 KB at a time, as Node's own `randomUUID` caches its bytes: one call
 * per 4 KB instead of one per id (every search records one; it was 1.2 % of a rare-word search's CPU). A byte is
 * zeroed once used, so none of a key's secret stays behind in the pool.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function nextRandomByte(): number {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const byte = pool[used]!;
  pool[used++] = 0;
  return byte;
}

/** Uniform random base62 string (rejection sampling: bytes 248-255 are skipped, so no character is favoured). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < 248) out += alphabet[byte % 62];
  }
  return out;
}

/** Stripe-style prefixed identifier: `usr_…`, `key_…`, `db_…`, 22 base62 characters (131 bits). */
export function newId(prefix: 'usr' | 'key' | 'db' | 'ses' | 'srch' | 'req' | 'itb' | 'ijob' | 'upl' | 'sqf' | 'poll'): string {
  return `${prefix}_${randomBase62(22)}`;
}
