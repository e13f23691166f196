import cors from '@koa/cors';
import type { Middleware } from 'koa';

/**
 * Response headers a page's script may read (CORS hides all but a few by default): the request id to quote to
 * support, and the rate-limit headers, so a page can slow down before it is refused.
 */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-RateLimit-Tier',
  'X-RateLimit-Window',
  'X-RateLimit-Retry-After',
  'Retry-After',
] as const;

/** Request headers a page may send: its credential, its JSON body's type and its own request id. */
export const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'] as const;

/** How long a browser may reuse a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE = 600;

/**
 * Cross-origin access for pages in a browser (@koa/cors), outermost, so a preflight OPTIONS of any path is answered
 * here and never reaches the contract's router (which would answer 405). An origin outside `origins` gets no CORS
 * header at all and the browser keeps the answer from the page; a request without `Origin` (servers, curl) gets
 * none either. Credentials are bearer tokens a script sets itself, never cookies, so `Allow-Credentials` is never
 * sent: CORS opens no operation that the credential rules would not (a secret key from a page is refused there).
 */
export function crossOrigin(origins: '*' | readonly string[], methods: readonly string[]): Middleware {
  const allowed = origins === '*' ? null : new Set(origins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      if (!origin) return '';
      if (!allowed) return '*';
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: [...methods],
    allowHeaders: [...ALLOWED_HEADERS],
    exposeHeaders: [...EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE,
    credentials: false,
  });
}
