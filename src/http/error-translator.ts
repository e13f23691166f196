import type { Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../lib/logger.js';
import { errorBody } from './envelope.js';

/** Anything that is not an AppError is a bug or an outage: the client learns only that, the log learns the rest. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
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
