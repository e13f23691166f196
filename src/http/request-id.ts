import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { createRequestState } from '../api/types.js';

const wellFormed = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every request an id (the caller's, if well formed), echoes it in X-Request-Id, and starts its state. Every
 * response also says `X-Content-Type-Options: nosniff`.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const id = wellFormed.test(incoming) ? incoming : randomUUID();
    ctx.state = createRequestState(id);
    ctx.set('X-Request-Id', id);
    // No response may be sniffed into another type (a JSON error holding user input rendered as HTML).
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  };
}
