import type { Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';

/**
 * Refuses a URL whose path or query string is not valid percent-encoding (a `%` not followed by two hex digits,
 * or escapes that do not spell UTF-8, such as `%FF%FE`): such a URL names no resource and no value, so it is 400
 * MALFORMED_URL for every route at once, before routing decodes its parameters. Koa leaves both parts as sent.
 */
export function wellFormedUrl(): Middleware {
  return async (ctx, next) => {
    if (!decodes(ctx.path)) throw malformed('path');
    if (!decodes(ctx.querystring)) throw malformed('query');
    await next();
  };
}

function decodes(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

function malformed(location: 'path' | 'query'): AppError {
  return new AppError(
    'MALFORMED_URL',
    `The URL's ${location === 'path' ? 'path' : 'query string'} is not valid percent-encoding: every % must start an escape of two hex digits, and the escapes must spell UTF-8 text.`,
    { location },
  );
}
