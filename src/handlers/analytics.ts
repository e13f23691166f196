/** Analytics tag. */
import type { Context } from 'openapi-backend';
import { userOf } from '../api/callers.js';
import { reply, type HandlerEnv, type QueryOf, type RawReply, type Reply } from '../api/types.js';

export async function getAnalyticsDashboard(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAnalyticsDashboard', 200, await services.analytics.dashboard(userOf(c), c.request.query as QueryOf<'getAnalyticsDashboard'>));
}

export async function getAnalyticsSearchTrends(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAnalyticsSearchTrends', 200, await services.analytics.searchTrends(userOf(c), c.request.query as QueryOf<'getAnalyticsSearchTrends'>));
}

export async function getAnalyticsPerformance(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAnalyticsPerformance', 200, await services.analytics.performance(userOf(c), c.request.query as QueryOf<'getAnalyticsPerformance'>));
}

export async function getAnalyticsPopularQueries(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAnalyticsPopularQueries', 200, await services.analytics.popularQueries(userOf(c), c.request.query as QueryOf<'getAnalyticsPopularQueries'>));
}

export async function getAnalyticsOverview(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAnalyticsOverview', 200, await services.analytics.overview(userOf(c), c.request.query as QueryOf<'getAnalyticsOverview'>));
}

export async function getAnalyticsInsights(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const query = c.request.query as QueryOf<'getAnalyticsInsights'>;
  return reply('getAnalyticsInsights', 200, await services.analytics.insights(userOf(c), query, query.includeRecommendations ?? true));
}

export async function exportAnalytics(c: Context, { services }: HandlerEnv): Promise<RawReply> {
  const file = await services.analyticsExport.export(userOf(c), c.request.query as QueryOf<'exportAnalytics'>);
  return { status: 200, raw: file.body, contentType: file.contentType, headers: { 'Content-Disposition': `attachment; filename="${file.filename}"` } };
}

export async function getAdminSystemOverview(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAdminSystemOverview', 200, await services.adminAnalytics.systemOverview(c.request.query as QueryOf<'getAdminSystemOverview'>));
}

export async function getAdminUserActivity(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('getAdminUserActivity', 200, await services.adminAnalytics.userActivity(c.request.query as QueryOf<'getAdminUserActivity'>));
}
