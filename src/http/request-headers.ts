import type { Middleware } from 'koa';

/**
 * Request headers whose repeats Node drops, keeping the first (`message.headers` in Node's http documentation and
 * `matchKnownFields` in its _http_incoming.js). `cookie` repeats are joined with "; ", `set-cookie` is an array,
 * every other repeat is joined with ", ".
 */
const firstValueOnly = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after',
  'server', 'user-agent',
]);

/**
 * The headers object Node's `req.headers` holds (same names, same handling of repeats), as a null-prototype
 * dictionary. Node builds its object for every request (it checks Host) as an ordinary object, one hidden-class
 * transition per header, so requests with different headers give it different shapes; Quarry's layers then look
 * headers up by name, most of them absent on a GET (x-request-id, content-length, transfer-encoding), and such
 * lookups on objects of many shapes leave V8's inline caches for its runtime. A dictionary answers every lookup,
 * present or absent, with one hash probe. Building it costs less than the lookups it saves: about 3 µs of a
 * key-authenticated request's CPU (`npm run bench`, and an A/B of two builds under the same load).
 */
export function headersFromRaw(raw: readonly string[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const previous = headers[name];
    if (name === 'set-cookie') {
      if (previous === undefined) headers[name] = [value];
      else (previous as string[]).push(value);
    } else if (previous === undefined) {
      headers[name] = value;
    } else if (!firstValueOnly.has(name)) {
      headers[name] = `${previous as string}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
  }
  return headers;
}

/**
 * Gives the request its headers object before anything reads it, through Koa's own setter (`ctx.request.headers`),
 * so that Koa, the body parser and Quarry all read the same object.
 */
export function requestHeaders(): Middleware {
  return (ctx, next) => {
    ctx.request.headers = headersFromRaw(ctx.req.rawHeaders);
    return next();
  };
}
