import type { Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../lib/logger.js';
import { isStoreUnavailable } from '../store/failures.js';
import { errorBody } from './envelope.js';

/** How long a client should wait before trying again while the store is unavailable (seconds). */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * Anything that is not an AppError is an outage or a bug. Quarry's store being down, out of connections or busy is
 * 503 STORE_UNAVAILABLE with Retry-After (issue 23 item 6): the request can succeed later as it is. Anything else is
 * 500. The client learns only that, the log learns the rest.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isStoreUnavailable(error)) {
    return new AppError('STORE_UNAVAILABLE', `The service cannot reach its data store right now. Try again in ${STORE_RETRY_AFTER_SECONDS} seconds.`, {
      retryAfter: STORE_RETRY_AFTER_SECONDS,
    }).withHeaders({ 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) });
  }
  return new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the request id to support.');
}

/**
 * The one place where errors become responses (STYLE.md §6). It also applies headers other layers left in
 * `ctx.state.responseHeaders` (X-RateLimit-*), to successes and errors alike.
 */
export function errorTranslator(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.status >= 500) {
        logger.error({ err: thrown, requestId: ctx.state.requestId, operationId: ctx.state.operationId }, 'request failed');
      }
      ctx.status = error.status;
      ctx.body = errorBody(error, ctx.state.requestId);
      ctx.set(error.headers);
    } finally {
      const extra = ctx.state.responseHeaders as Record<string, string> | undefined;
      // Straight to Node's setHeader: ctx.set copies the object into entry arrays first, on every key request.
      if (extra && !ctx.headerSent) for (const name in extra) ctx.res.setHeader(name, extra[name]!);
    }
  };
}
