/** Health tag. */
import type { Context } from 'openapi-backend';
import { optionalKeyOf } from '../api/callers.js';
import { reply, type HandlerEnv, type Reply } from '../api/types.js';

export async function getHealth(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getHealth', 200, await services.health.report(optionalKeyOf(c)));
}
