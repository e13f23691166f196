import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import { hasPermission } from '../services/keys/api-key-service.js';
import type { KeyCaller, UserCaller } from '../services/callers.js';
import type { OperationLimit } from '../services/rate-limit/limits-service.js';
import { checkKeyUse } from '../services/keys/publishable-keys.js';
import type { HandlerEnv } from './types.js';

type Permission = 'search' | 'analytics' | 'admin';

/**
 * The contract's own word on who may call an operation and how often: `x-quarry-permission`, `x-quarry-admin`,
 * `x-quarry-publishable`, `x-quarry-rate-limit`.
 */
interface OperationPolicy {
  permission?: Permission;
  adminOnly: boolean;
  /** A publishable key may call it (search and suggestions only). */
  publishable: boolean;
  limit: OperationLimit;
}

function policyOf(c: Context): OperationPolicy {
  const operation = c.operation as unknown as Record<string, unknown>;
  return {
    permission: operation['x-quarry-permission'] as Permission | undefined,
    adminOnly: operation['x-quarry-admin'] === true,
    publishable: operation['x-quarry-publishable'] === true,
    limit: operation['x-quarry-rate-limit'] as OperationLimit,
  };
}

/** The page's origin when a browser sent the request (`Origin`), else null. */
function originOf(c: Context): string | null {
  const origin = c.request.headers.origin;
  const value = Array.isArray(origin) ? origin[0] : origin;
  return value ? value : null;
}

/**
 * Runs after authentication and before validation (openapi-backend's postSecurityHandler): the rate limits first, so
 * that every authenticated request counts, valid or not; then where the key may be used (a secret key never from
 * another site's page, a publishable key only on its operations and from its origins), role and permission checks.
 */
export async function enforcePolicies(c: Context, env: HandlerEnv): Promise<void> {
  const isPublic = (c.operation.security ?? []).length === 0;
  if (!c.security?.authorized && !isPublic) return;
  const { permission, adminOnly, publishable, limit } = policyOf(c);
  const user = c.security.bearerJwt as UserCaller | undefined;
  const key = c.security.apiKey as KeyCaller | { error: unknown } | undefined;
  const keyCaller = key && 'kind' in key ? key : null;
  const { state } = env;
  if (keyCaller) state.keyCaller = keyCaller;
  try {
    const admission = await env.services.limits.admit({
      operationId: c.operation.operationId!,
      operationLimit: limit,
      ip: env.ip,
      userId: user?.kind === 'user' ? user.user.id : null,
      key: keyCaller,
      requestId: env.requestId,
    });
    if (admission.window) state.rateLimit = admission.window;
    state.rateLimitExempt = !admission.counted;
    if (admission.release) state.onDone.push(admission.release);
    const { refund } = admission;
    if (refund && typeof limit === 'object' && limit.uncounted) {
      const uncounted = limit.uncounted;
      state.onDone.push((status) => {
        if (uncounted.includes(status)) refund().catch(() => undefined);
      });
    }
  } catch (error) {
    if (error instanceof AppError && error.code === 'RATE_LIMIT_EXCEEDED') state.rateLimited = true;
    throw error;
  }
  if (keyCaller) checkKeyUse(keyCaller.key, { origin: originOf(c), ownOrigin: env.ownOrigin, publishableOperation: publishable });
  if (adminOnly && user?.kind === 'user' && user.role !== 'admin') {
    throw new AppError('ADMIN_REQUIRED', 'This operation is for administrators only.');
  }
  if (permission && keyCaller && !hasPermission(keyCaller.key, permission)) {
    throw new AppError('INSUFFICIENT_PERMISSIONS', `This API key lacks the "${permission}" permission.`, {
      required: permission,
      granted: keyCaller.key.permissions,
    });
  }
}
