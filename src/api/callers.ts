import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import type { KeyCaller, UserCaller } from '../services/callers.js';

/** The JWT caller of an operation secured by bearerJwt (the security handler has already verified it). */
export function userOf(c: Context): UserCaller {
  const caller = c.security?.bearerJwt as UserCaller | undefined;
  if (!caller || caller.kind !== 'user') throw new AppError('AUTH_REQUIRED', 'Send a JWT as "Authorization: Bearer <token>".');
  return caller;
}

/** The API-key caller of an operation secured by apiKey. */
export function keyOf(c: Context): KeyCaller {
  const caller = c.security?.apiKey as KeyCaller | undefined;
  if (!caller || caller.kind !== 'key') throw new AppError('AUTH_REQUIRED', 'Send an API key as "Authorization: Bearer <key>".');
  return caller;
}

/** The JWT caller when one was presented and valid (operations where a JWT is optional, e.g. management health). */
export function optionalUserOf(c: Context): UserCaller | null {
  const caller = c.security?.bearerJwt as UserCaller | { error: unknown } | undefined;
  return caller && 'kind' in caller && caller.kind === 'user' ? caller : null;
}

/** The API-key caller when one was presented and valid (operations where a key is optional, e.g. health). */
export function optionalKeyOf(c: Context): KeyCaller | null {
  const caller = c.security?.apiKey as KeyCaller | { error: unknown } | undefined;
  return caller && 'kind' in caller ? caller : null;
}
