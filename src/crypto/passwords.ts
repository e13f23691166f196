import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt is memory-hard: N=2^15, r=8 needs 32 MiB per hash, which makes GPU guessing expensive.
const params = { N: 32768, r: 8, p: 1, keyLength: 64 };

function derive(password: string, salt: Buffer, options: ScryptOptions & { keyLength: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, options.keyLength, { ...options, maxmem: 128 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url), so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p), keyLength: expected.length });
  return timingSafeEqual(actual, expected);
}

/** A hash of a random password, compared against when the email is unknown so both answers take as long. */
export const decoyHash = hashPassword(randomBytes(16).toString('hex'));

/** Strength rule beyond length (the contract checks 10-128 characters): a letter plus a digit or symbol. */
export function passwordProblem(password: string, email: string): string | null {
  if (!/\p{L}/u.test(password) || !/[\p{N}\p{P}\p{S}]/u.test(password)) {
    return 'must contain at least one letter and one digit or symbol';
  }
  if (password.toLowerCase() === email.toLowerCase()) return 'must not be the email address';
  return null;
}
