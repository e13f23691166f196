import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headersFromRaw } from '../../../src/http/request-headers.js';

/** What Node itself makes of a raw header list: its own IncomingMessage, fed the way its parser feeds it. */
function nodeHeaders(raw: string[]): Record<string, string | string[]> {
  const message = new IncomingMessage(new Socket());
  (message as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines(raw, raw.length);
  return { ...message.headers } as Record<string, string | string[]>;
}

// Names Node treats specially (first value only, "; " joins, arrays), ordinary ones, in several casings.
const names = [
  'Host', 'host', 'Authorization', 'authorization', 'AUTHORIZATION', 'Content-Type', 'content-length', 'User-Agent',
  'Cookie', 'cookie', 'Set-Cookie', 'set-cookie', 'Accept', 'accept', 'X-Request-Id', 'x-request-id', 'X-Forwarded-For',
  'Transfer-Encoding', 'If-Match', 'Age', 'Referer', 'x-custom', 'X-Custom', 'constructor', 'toString',
];

describe('headersFromRaw', () => {
  it('when given any list of request headers, then it reads them exactly as Node does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...names), fc.string({ maxLength: 12 })), { maxLength: 12 }), (pairs) => {
        const raw = pairs.flat();
        expect({ ...headersFromRaw(raw) }).toEqual(nodeHeaders(raw));
      }),
      { numRuns: 2000 },
    );
  });

  it('when a header repeats, then first-only fields keep the first value and the rest are joined as Node joins them', () => {
    const headers = headersFromRaw([
      'Authorization', 'Bearer first', 'authorization', 'Bearer second',
      'X-Forwarded-For', '10.0.0.1', 'x-forwarded-for', '10.0.0.2',
      'Cookie', 'a=1', 'cookie', 'b=2',
      'Set-Cookie', 'c=3', 'set-cookie', 'd=4',
    ]);
    expect(headers).toEqual(Object.assign(Object.create(null), {
      authorization: 'Bearer first',
      'x-forwarded-for': '10.0.0.1, 10.0.0.2',
      cookie: 'a=1; b=2',
      'set-cookie': ['c=3', 'd=4'],
    }));
  });

  it('when a header is named like an Object.prototype member, then it is a plain entry, not an inherited one', () => {
    const headers = headersFromRaw(['Constructor', 'x', '__proto__', 'y']);
    expect(headers.constructor).toBe('x');
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(headersFromRaw([]).toString).toBeUndefined();
  });
});
