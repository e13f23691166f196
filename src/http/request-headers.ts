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
 * The headers object Node's `req.headers` would build from `rawHeaders` (same names, same handling of repeats),
 * as a null-prototype dictionary. Node's own getter builds an ordinary object one keyed store at a time, each new
 * header name a hidden-class transition that goes through V8's runtime once requests differ in their headers; on a
 * key-authenticated request that was about 3 µs, a tenth of its CPU (`npm run bench`). A dictionary takes the same
 * stores as plain hash-table inserts.
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
