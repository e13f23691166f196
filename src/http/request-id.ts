import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { createRequestState } from '../api/types.js';

const wellFormed = /^[A-Za-z0-9._-]{1,64}$/;

/** Gives every request an id (the caller's, if well formed), echoes it in X-Request-Id, and starts its state. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    // Header names are lower case (request-headers.ts); reading them directly spares ctx.get's lower-casing.
    const incoming = ctx.headers['x-request-id'];
    const id = typeof incoming === 'string' && wellFormed.test(incoming) ? incoming : randomUUID();
    ctx.state = createRequestState(id);
    ctx.set('x-request-id', id); // lower case: see LimitsService.setHeaders
    await next();
  };
}
