import bodyParser from 'koa-bodyparser';
import type { Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';

/**
 * The deepest a JSON body may nest objects and arrays. The deepest body the contract describes, a search filter of
 * 6 levels, nests about 15; request validation walks a body recursively, so an unbounded one could exhaust the
 * stack (a filter of 10,000 `not`s fits in 80 KB).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests objects and arrays deeper than `limit`: one pass over the text counting brackets outside
 * strings, no recursion, stopping at the first level too deep. Malformed text is left to the parser to refuse.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i += 1; // a backslash escapes the next character, a quote included
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b || char === 0x5b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (char === 0x7d || char === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * Parses JSON bodies: malformed JSON, JSON nested deeper than MAX_JSON_DEPTH and oversized bodies are thrown to the
 * error translator. Body-less POSTs (logout, regenerate) pass. A body of another type is left unread: the one
 * operation that takes `application/octet-stream` (uploadSqliteFile) reads it as a stream, within its own limits, and
 * whether the routed operation accepts the body's type at all is checked after routing (api/media-type.ts, 415).
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
    // Only JSON is read here. A file upload (uploadSqliteFile) is streamed by its handler; a body of any other type,
    // or of none, is left unread for the routed operation to refuse naming the type it takes (api/media-type.ts).
    if (hasBody && !ctx.is('application/json')) {
      (ctx.request as { body?: unknown }).body = undefined;
      return next();
    }
    if (length > limitBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limitBytes} bytes.`, { limit: limitBytes });
    }
    if (!hasBody) {
      // What koa-bodyparser answers for a request without a body.
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    // The parser (V8's JSON.parse) does not recurse; the depth is bounded before anything that does sees the body.
    await parse(ctx, async () => {
      const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
      if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
        throw new AppError('INVALID_JSON', `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`, { maxDepth: MAX_JSON_DEPTH });
      }
      await next();
    });
  };
}
