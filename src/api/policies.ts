import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import { hasPermission } from '../services/api-key-service.js';
import type { KeyCaller, UserCaller } from '../services/callers.js';
import { checkKeyUse } from '../services/publishable-keys.js';
import type { HandlerEnv } from './types.js';

type Permission = 'search' | 'analytics' | 'admin';

/** The contract's own word on who may call an operation: `x-quarry-permission`, `x-quarry-admin`, `x-quarry-publishable`. */
interface OperationPolicy {
  permission?: Permission;
  adminOnly?: boolean;
  /** A publishable key may call it (search and suggestions only). */
  publishable: boolean;
}

function policyOf(c: Context): OperationPolicy {
  const operation = c.operation as unknown as Record<string, unknown>;
  return {
    permission: operation['x-quarry-permission'] as Permission | undefined,
    adminOnly: operation['x-quarry-admin'] === true,
    publishable: operation['x-quarry-publishable'] === true,
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
 * that every authenticated request counts, valid or not; then where the key may be used (a secret key never from a
 * web page, a publishable key only on its operations and from its origins), role and permission checks.
 */
export async function enforcePolicies(c: Context, env: HandlerEnv): Promise<void> {
  const isPublic = (c.operation.security ?? []).length === 0;
  if (!c.security?.authorized && !isPublic) return;
  const { permission, adminOnly, publishable } = policyOf(c);
  const user = c.security.bearerJwt as UserCaller | undefined;
  const key = c.security.apiKey as KeyCaller | undefined;
  const keyCaller = key && 'kind' in key ? key : null;
  if (keyCaller) env.keyCaller = env.state.keyCaller = keyCaller;
  await env.services.limits.admit(c, env);
  if (keyCaller) checkKeyUse(keyCaller.key, { origin: originOf(c), publishableOperation: publishable });
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
