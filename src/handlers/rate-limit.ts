/** RateLimit tag. */
import type { Context } from 'openapi-backend';
import { keyOf } from '../api/callers.js';
import { reply, type HandlerEnv, type QueryOf, type Reply } from '../api/types.js';

export async function getRateLimitStatus(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getRateLimitStatus', 200, await services.rateLimit.status(keyOf(c)));
}

export async function getRateLimitAnalytics(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const query = c.request.query as QueryOf<'getRateLimitAnalytics'>;
  return reply('getRateLimitAnalytics', 200, await services.rateLimit.analytics(keyOf(c), query.period ?? 'day', query.includeBreakdown ?? false));
}
