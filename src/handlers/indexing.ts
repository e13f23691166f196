/** Indexing tag: the search index of a connection's tables. */
import type { Context } from 'openapi-backend';
import { userOf } from '../api/callers.js';
import { reply, type BodyOf, type HandlerEnv, type PathOf, type Reply } from '../api/types.js';

export async function getDatabaseIndex(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'getDatabaseIndex'>;
  return reply('getDatabaseIndex', 200, await services.searchIndex.service.overview(userOf(c), databaseId));
}

export async function syncDatabaseIndex(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'syncDatabaseIndex'>;
  const { tables } = (c.request.requestBody ?? {}) as BodyOf<'syncDatabaseIndex'>;
  return reply('syncDatabaseIndex', 202, await services.searchIndex.service.sync(userOf(c), databaseId, tables));
}

export async function getIndexedTable(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId, table } = c.request.params as PathOf<'getIndexedTable'>;
  return reply('getIndexedTable', 200, await services.searchIndex.service.table(userOf(c), databaseId, table));
}

export async function updateIndexedTable(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId, table } = c.request.params as PathOf<'updateIndexedTable'>;
  const body = c.request.requestBody as BodyOf<'updateIndexedTable'>;
  return reply('updateIndexedTable', 200, await services.searchIndex.service.updateTable(userOf(c), databaseId, table, body));
}

export async function cancelIndexSync(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId, table } = c.request.params as PathOf<'cancelIndexSync'>;
  return reply('cancelIndexSync', 200, await services.searchIndex.service.cancel(userOf(c), databaseId, table));
}
