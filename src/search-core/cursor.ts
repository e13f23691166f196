/**
 * SearchRequest.cursor / SearchResponse.nextCursor: the next page's offset, bound to the search it belongs to and
 * signed. Format: base64url(JSON {v: 1, o: offset, f: fingerprint}) "." base64url(HMAC-SHA-256)[0..22]. The fingerprint
 * covers the caller and everything that decides the ranking (query, mode, databases, tables, columns), so a cursor is
 * refused by another search, another user, or after any change of a byte.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE_CHARS = 22; // 132 bits

export function searchFingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

function sign(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url').slice(0, SIGNATURE_CHARS);
}

export function encodeCursor(secret: Buffer, fingerprint: string, offset: number): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, o: offset, f: fingerprint })).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

/** The offset of a valid cursor of this search, or null for anything else. */
export function decodeCursor(secret: Buffer, fingerprint: string, cursor: string, maxOffset: number): number | null {
  const match = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!match) return null;
  const [, payload, signature] = match as unknown as [string, string, string];
  const expected = Buffer.from(sign(secret, payload));
  if (!timingSafeEqual(expected, Buffer.from(signature))) return null;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { v, o, f } = (body ?? {}) as { v?: unknown; o?: unknown; f?: unknown };
  if (v !== 1 || f !== fingerprint || typeof o !== 'number' || !Number.isInteger(o) || o < 0 || o > maxOffset) return null;
  return o;
}
