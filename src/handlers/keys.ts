/** Keys tag. */
import type { Context } from 'openapi-backend';
import { userOf } from '../api/callers.js';
import { reply, secretReply, type BodyOf, type HandlerEnv, type PathOf, type QueryOf, type Reply } from '../api/types.js';

export async function createApiKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return secretReply(reply('createApiKey', 201, await services.apiKeys.create(userOf(c), c.request.requestBody as BodyOf<'createApiKey'>)));
}

export async function createPublishableKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('createPublishableKey', 201, await services.apiKeys.createPublishable(userOf(c), c.request.requestBody as BodyOf<'createPublishableKey'>));
}

export async function listApiKeys(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('listApiKeys', 200, await services.apiKeys.list(userOf(c)));
}

export async function updateApiKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { keyId } = c.request.params as PathOf<'updateApiKey'>;
  return reply('updateApiKey', 200, await services.apiKeys.update(userOf(c), keyId, c.request.requestBody as BodyOf<'updateApiKey'>));
}

export async function revokeApiKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { keyId } = c.request.params as PathOf<'revokeApiKey'>;
  return reply('revokeApiKey', 200, await services.apiKeys.revoke(userOf(c), keyId));
}

export async function regenerateApiKey(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { keyId } = c.request.params as PathOf<'regenerateApiKey'>;
  return secretReply(reply('regenerateApiKey', 200, await services.apiKeys.regenerate(userOf(c), keyId)));
}

export async function getApiKeyUsage(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { keyId } = c.request.params as PathOf<'getApiKeyUsage'>;
  const query = c.request.query as QueryOf<'getApiKeyUsage'>;
  return reply('getApiKeyUsage', 200, await services.keyUsage.usage(userOf(c), keyId, query));
}
