/** Accounts tag: one function per operationId of openapi.yaml. */
import type { Context } from 'openapi-backend';
import { userOf } from '../api/callers.js';
import { reply, secretReply, type BodyOf, type HandlerEnv, type Reply } from '../api/types.js';

export async function registerUser(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const body = c.request.requestBody as BodyOf<'registerUser'>;
  return secretReply(reply('registerUser', 201, await services.accounts.register(body)));
}

export async function loginUser(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return secretReply(reply('loginUser', 200, await services.accounts.login(c.request.requestBody as BodyOf<'loginUser'>)));
}

export async function refreshSession(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { refreshToken } = c.request.requestBody as BodyOf<'refreshSession'>;
  return secretReply(reply('refreshSession', 200, await services.accounts.refresh(refreshToken)));
}

export async function logoutUser(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('logoutUser', 200, await services.accounts.logout(userOf(c)));
}

export async function getProfile(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getProfile', 200, await services.accounts.profile(userOf(c)));
}

export async function updateProfile(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const body = c.request.requestBody as BodyOf<'updateProfile'>;
  return reply('updateProfile', 200, await services.accounts.updateProfile(userOf(c), body));
}

export async function changePassword(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const body = c.request.requestBody as BodyOf<'changePassword'>;
  return secretReply(reply('changePassword', 200, await services.accounts.changePassword(userOf(c), body)));
}
