import bodyParser from 'koa-bodyparser';
import type { Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';

/**
 * Parses JSON bodies: malformed JSON and oversized bodies are thrown to the error translator. Body-less POSTs
 * (logout, regenerate) pass. An `application/octet-stream` body is left unread for the one operation that takes
 * it (uploadSqliteFile reads it as a stream, within its own limits); whether the routed operation accepts the
 * body's type at all is checked after routing (api/media-type.ts). Any other type is 415.
 */
export function jsonBody(limitBytes: number): Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    // Turns co-body's errors into ours where they happen, instead of guessing from their shape later.
    onerror: (error: Error & { type?: string; status?: number }) => {
      if (error.type === 'entity.too.large' || error.status === 413) {
        throw new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limitBytes} bytes.`, { limit: limitBytes });
      }
      if (error.status === 415 || error.type === 'encoding.unsupported') {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.');
      }
      throw new AppError('INVALID_JSON', error instanceof SyntaxError && /only supports object and array/.test(error.message)
        ? 'The request body must be a JSON object.'
        : 'The request body is not valid JSON.');
    },
  });
  return async (ctx, next) => {
    const length = Number(ctx.get('Content-Length') || 0);
    const hasBody = length > 0 || ctx.get('Transfer-Encoding') !== '';
    // A file upload (uploadSqliteFile) is streamed by its handler, never parsed here.
    if (hasBody && ctx.is('application/octet-stream')) {
      (ctx.request as { body?: unknown }).body = undefined;
      return next();
    }
    if (hasBody && !ctx.is('application/json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.', { contentType: ctx.get('Content-Type') || null });
    }
    if (length > limitBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limitBytes} bytes.`, { limit: limitBytes });
    }
    if (!hasBody) {
      // What koa-bodyparser answers for a request without a body.
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    await parse(ctx, next);
  };
}
