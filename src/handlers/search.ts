/** Search tag. */
import type { Context } from 'openapi-backend';
import { keyOf } from '../api/callers.js';
import { StageTimer } from '../lib/stage-timer.js';
import { reply, type BodyOf, type HandlerEnv, type QueryOf, type Reply } from '../api/types.js';

export async function searchDatabases(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const timer = new StageTimer();
  const data = await services.search.search(keyOf(c), c.request.requestBody as BodyOf<'searchDatabases'>, timer);
  return { ...reply('searchDatabases', 200, data), headers: { 'Server-Timing': timer.header() } };
}

export async function getSearchSuggestions(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getSearchSuggestions', 200, await services.suggestions.suggest(keyOf(c), c.request.query as QueryOf<'getSearchSuggestions'>));
}

export async function getSearchTrends(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getSearchTrends', 200, await services.searchHistory.trends(keyOf(c), c.request.query as QueryOf<'getSearchTrends'>));
}

export async function getSearchHistory(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getSearchHistory', 200, await services.searchHistory.history(keyOf(c), c.request.query as QueryOf<'getSearchHistory'>));
}
