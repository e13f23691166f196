import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import type { Services } from '../composition.js';
import type { HandlerEnv } from './types.js';
import { looksLikeApiKey } from '../services/keys/api-key-secrets.js';

/** The bearer token of the request, or null when there is none. */
function bearer(c: Context): string | null {
  const header = c.request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match ? match[1] : null;
}

const missing = () => new AppError('AUTH_REQUIRED', 'Send a credential as "Authorization: Bearer <token>".');

/** Security handlers by scheme name of openapi.yaml (`components.securitySchemes`). */
export function securityHandlers(services: Services) {
  return {
    async bearerJwt(c: Context) {
      const token = bearer(c);
      if (!token) throw missing();
      if (looksLikeApiKey(token)) {
        throw new AppError('INVALID_TOKEN', 'This operation needs a JWT from login, not an API key.');
      }
      return services.accounts.authenticate(token);
    },
    async apiKey(c: Context) {
      const token = bearer(c);
      // No credential is not an exception: on operations where a key is optional (health) it is the common case,
      // and unauthorizedHandler answers AUTH_REQUIRED where a key is required.
      if (!token) return null;
      return services.apiKeys.authenticate(token);
    },
  };
}

/**
 * Called when no security requirement was met: answers with the most specific error a handler raised
 * (an expired key says so, rather than a generic 401).
 */
export async function unauthorizedHandler(c: Context, _env: HandlerEnv): Promise<never> {
  const errors = Object.values(c.security ?? {})
    .map((result) => (result && typeof result === 'object' && 'error' in result ? result.error : null))
    .filter(Boolean);
  const specific = errors.find((error) => error instanceof AppError && error.code !== 'AUTH_REQUIRED');
  throw specific ?? errors[0] ?? missing();
}
