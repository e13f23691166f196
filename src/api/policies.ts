import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';
import { hasPermission } from '../services/api-key-service.js';
import type { KeyCaller, UserCaller } from '../services/callers.js';
import type { HandlerEnv } from './types.js';

type Permission = 'search' | 'analytics' | 'admin';

/** The contract's own word on who may call an operation: `x-quarry-permission`, `x-quarry-admin`. */
interface OperationPolicy {
  permission?: Permission;
  adminOnly?: boolean;
}

function policyOf(c: Context): OperationPolicy {
  const operation = c.operation as unknown as Record<string, unknown>;
  return {
    permission: operation['x-quarry-permission'] as Permission | undefined,
    adminOnly: operation['x-quarry-admin'] === true,
  };
}

/**
 * Runs after authentication and before validation (openapi-backend's postSecurityHandler): role and permission
 * checks, then the rate limits, so that every authenticated request counts, valid or not.
 */
export async function enforcePolicies(c: Context, env: HandlerEnv): Promise<void> {
  const isPublic = (c.operation.security ?? []).length === 0;
  if (!c.security?.authorized && !isPublic) return;
  const { permission, adminOnly } = policyOf(c);
  const user = c.security.bearerJwt as UserCaller | undefined;
  const key = c.security.apiKey as KeyCaller | undefined;
  const keyCaller = key && 'kind' in key ? key : null;
  if (keyCaller) env.keyCaller = env.state.keyCaller = keyCaller;
  await env.services.limits.admit(c, env);
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
