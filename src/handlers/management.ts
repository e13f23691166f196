/** Management tag. */
import type { Context } from 'openapi-backend';
import { optionalKeyOf, optionalUserOf, userOf } from '../api/callers.js';
import { reply, secretReply, type BodyOf, type HandlerEnv, type PathOf, type Reply } from '../api/types.js';

export async function setupInitialKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const body = (c.request.requestBody ?? {}) as NonNullable<BodyOf<'setupInitialKey'>>;
  return secretReply(reply('setupInitialKey', 201, await services.apiKeys.setupInitialKey(userOf(c), body.name?.trim() || undefined)));
}

export async function getManagementHealth(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getManagementHealth', 200, await services.health.report(optionalKeyOf(c), optionalUserOf(c)?.role === 'admin'));
}

export async function updateUserPlan(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { userId } = c.request.params as PathOf<'updateUserPlan'>;
  const { plan } = c.request.requestBody as BodyOf<'updateUserPlan'>;
  return reply('updateUserPlan', 200, await services.plans.updatePlan(userId, plan));
}

export async function getMigrationStatus(_c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getMigrationStatus', 200, await services.migrations.status());
}
