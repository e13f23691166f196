import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const wellFormed = /^[A-Za-z0-9._-]{1,64}$/;

/** Gives every request an id (the caller's, if well formed) and echoes it in X-Request-Id. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    // Node lower-cases incoming header names; reading them directly spares ctx.get's lower-casing on every request.
    const incoming = ctx.headers['x-request-id'];
    ctx.state.requestId = typeof incoming === 'string' && wellFormed.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
