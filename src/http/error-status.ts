import type { AppError, ErrorCode } from '../errors/app-error.js';
import type { RateLimitWindow } from '../rate-limit/decision.js';

/** HTTP status of every stable error code; the one place that decides it (openapi.yaml lists the same table). */
export const statusOfCode: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  MALFORMED_URL: 400,
  HOST_NOT_ALLOWED: 400,
  SQLITE_PATH_NOT_ALLOWED: 400,
  AUTH_REQUIRED: 401,
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  SESSION_ENDED: 401,
  INVALID_CREDENTIALS: 401,
  ACCOUNT_DISABLED: 401,
  INVALID_API_KEY: 401,
  MALFORMED_API_KEY: 401,
  KEY_REVOKED: 401,
  KEY_EXPIRED: 401,
  KEY_ENVIRONMENT_MISMATCH: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  ADMIN_REQUIRED: 403,
  TIER_LIMIT_EXCEEDED: 403,
  FEATURE_NOT_IN_TIER: 403,
  ORIGIN_NOT_ALLOWED: 403,
  SECRET_KEY_IN_BROWSER: 403,
  TIER_ABOVE_PLAN: 403,
  TOO_MANY_DATABASES: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  EMAIL_TAKEN: 409,
  SETUP_ALREADY_COMPLETED: 409,
  CONFLICT: 409,
  SEMANTIC_INDEX_REQUIRED: 409,
  INVALID_SQLITE_FILE: 422,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  DATABASE_UNREACHABLE: 502,
  DATABASE_TIMEOUT: 502,
  DATABASE_AUTH_FAILED: 502,
  DATABASE_NOT_FOUND: 502,
  DATABASE_TLS_ERROR: 502,
  DATABASE_ERROR: 502,
  RATE_LIMIT_EXCEEDED: 429,
  CONCURRENCY_LIMIT_EXCEEDED: 429,
  AI_RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
  STORE_UNAVAILABLE: 503,
  INDEX_UNAVAILABLE: 503,
};

/** The status of an error: its code's, except a database failure that refuses what the caller submitted (422). */
export function statusOf(error: AppError): number {
  if (error.facts.rejectsSubmission && error.code.startsWith('DATABASE_')) return 422;
  return statusOfCode[error.code];
}

/** X-RateLimit-* of a caller's window (openapi.yaml, components.headers). */
export function rateLimitHeaders(window: RateLimitWindow): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(window.remaining),
    'X-RateLimit-Reset': window.resetAt.toISOString(),
    'X-RateLimit-Tier': window.tier,
    'X-RateLimit-Window': String(window.windowSeconds),
  };
}

/**
 * The headers an error answers with beyond the request's own: the refused window, when to try again (a limit's
 * refusal says so in X-RateLimit-Retry-After too), and the methods a path takes.
 */
export function errorHeaders(error: AppError): Record<string, string> {
  const { rateLimit, retryAfterSeconds, allowedMethods } = error.facts;
  const limited = statusOfCode[error.code] === 429;
  return {
    ...(rateLimit && rateLimitHeaders(rateLimit)),
    ...(retryAfterSeconds !== undefined && { 'Retry-After': String(retryAfterSeconds) }),
    ...(retryAfterSeconds !== undefined && limited && { 'X-RateLimit-Retry-After': String(retryAfterSeconds) }),
    ...(allowedMethods && { Allow: allowedMethods.join(', ') }),
  };
}
