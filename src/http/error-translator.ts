import type { Middleware } from 'koa';
import type { RequestState } from '../api/types.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../lib/logger.js';
import { isStoreUnavailable } from '../store/failures.js';
import { errorBody } from './envelope.js';
import { errorHeaders, rateLimitHeaders, statusOf } from './error-status.js';

/** How long a client should wait before trying again while the store is unavailable (seconds). */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * Anything that is not an AppError is an outage or a bug. Quarry's store being down, out of connections or busy is
 * 503 STORE_UNAVAILABLE with Retry-After: the request can succeed later as it is. Anything else is
 * 500. The client learns only that, the log learns the rest.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isStoreUnavailable(error)) {
    return new AppError('STORE_UNAVAILABLE', `The service cannot reach its data store right now. Try again in ${STORE_RETRY_AFTER_SECONDS} seconds.`, {
      retryAfter: STORE_RETRY_AFTER_SECONDS,
    }, { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS });
  }
  return new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the request id to support.');
}

/**
 * The one place where errors become responses: status from the code, the error envelope, and the
 * headers the error's facts call for. Every response, success or error, also reports the caller's rate-limit window
 * once the request was admitted (X-RateLimit-*).
 */
export function errorTranslator(logger: Logger): Middleware {
  return async (ctx, next) => {
    const state = ctx.state as RequestState;
    try {
      await next();
      if (state.rateLimit) ctx.set(rateLimitHeaders(state.rateLimit));
    } catch (thrown) {
      const error = toAppError(thrown);
      const status = statusOf(error);
      if (status >= 500) {
        logger.error({ err: thrown, requestId: state.requestId, operationId: state.operationId }, 'request failed');
      }
      ctx.status = status;
      ctx.body = errorBody(error, state.requestId);
      if (state.rateLimit) ctx.set(rateLimitHeaders(state.rateLimit));
      ctx.set(errorHeaders(error));
    }
  };
}
