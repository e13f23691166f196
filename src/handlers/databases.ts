/** Databases tag. */
import type { Context } from 'openapi-backend';
import { userOf } from '../api/callers.js';
import { reply, type BodyOf, type HandlerEnv, type PathOf, type QueryOf, type Reply } from '../api/types.js';

export async function createDatabase(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('createDatabase', 201, await services.databases.create(userOf(c), c.request.requestBody as BodyOf<'createDatabase'>));
}

export async function uploadSqliteFile(c: Context, { services, rawBody }: HandlerEnv): Promise<Reply> {
  const { fileName } = c.request.params as PathOf<'uploadSqliteFile'>;
  const length = Number(c.request.headers['content-length']);
  const { created, data } = await services.sqliteFiles.upload(userOf(c), fileName, rawBody, Number.isFinite(length) ? length : null);
  return created ? reply('uploadSqliteFile', 201, data) : reply('uploadSqliteFile', 200, data);
}

export async function listSqliteFiles(c: Context, { services }: HandlerEnv): Promise<Reply> {
  return reply('listSqliteFiles', 200, await services.sqliteFiles.list(userOf(c)));
}

export async function deleteSqliteFile(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { fileName } = c.request.params as PathOf<'deleteSqliteFile'>;
  return reply('deleteSqliteFile', 200, await services.sqliteFiles.remove(userOf(c), fileName));
}

export async function listDatabases(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { environment } = c.request.query as QueryOf<'listDatabases'>;
  return reply('listDatabases', 200, await services.databases.list(userOf(c), environment));
}

export async function getDatabase(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'getDatabase'>;
  return reply('getDatabase', 200, await services.databases.get(userOf(c), databaseId));
}

export async function updateDatabase(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'updateDatabase'>;
  return reply('updateDatabase', 200, await services.databases.update(userOf(c), databaseId, c.request.requestBody as BodyOf<'updateDatabase'>));
}

export async function deleteDatabase(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'deleteDatabase'>;
  return reply('deleteDatabase', 200, await services.databases.remove(userOf(c), databaseId));
}

export async function testDatabaseConnection(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'testDatabaseConnection'>;
  return reply('testDatabaseConnection', 200, await services.databases.test(userOf(c), databaseId));
}

export async function getDatabaseSchema(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'getDatabaseSchema'>;
  const { refresh } = c.request.query as QueryOf<'getDatabaseSchema'>;
  return reply('getDatabaseSchema', 200, await services.databases.schema(userOf(c), databaseId, refresh ?? false));
}

export async function getDatabaseStatus(c: Context, { services }: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'getDatabaseStatus'>;
  return reply('getDatabaseStatus', 200, await services.databases.status(userOf(c), databaseId));
}

/**
 * The semantic-index operations are deprecated (vectors live in the search index); each response says so
 * and names its successor, as the contract's versioning promises.
 */
const DEPRECATED_SINCE = '@1795564800'; // 2026-11-25T00:00:00Z
function deprecated(answer: Reply, databaseId: string, table: string): Reply {
  return {
    ...answer,
    headers: {
      Deprecation: DEPRECATED_SINCE,
      Link: `</api/v1/databases/${encodeURIComponent(databaseId)}/index/tables/${encodeURIComponent(table)}>; rel="successor-version"`,
    },
  };
}

export async function startSemanticIndex(c: Context, env: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'startSemanticIndex'>;
  const { table } = c.request.requestBody as BodyOf<'startSemanticIndex'>;
  const { created, job } = await env.services.searchIndex.service.startSemantic(userOf(c), databaseId, table);
  return deprecated(created ? reply('startSemanticIndex', 202, job) : reply('startSemanticIndex', 200, job), databaseId, job.table);
}

export async function getSemanticIndexStatus(c: Context, env: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'getSemanticIndexStatus'>;
  const { table } = c.request.query as QueryOf<'getSemanticIndexStatus'>;
  const job = await env.services.searchIndex.service.semanticStatus(userOf(c), databaseId, table);
  return deprecated(reply('getSemanticIndexStatus', 200, job), databaseId, job.table);
}

export async function cancelSemanticIndex(c: Context, env: HandlerEnv): Promise<Reply> {
  const { databaseId } = c.request.params as PathOf<'cancelSemanticIndex'>;
  const { table } = c.request.query as QueryOf<'cancelSemanticIndex'>;
  const job = await env.services.searchIndex.service.cancelSemantic(userOf(c), databaseId, table);
  return deprecated(reply('cancelSemanticIndex', 200, job), databaseId, job.table);
}
