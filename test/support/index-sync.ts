/** Waiting for the search index through the API (issue 27): syncs run in the background. */
import type { ApiClient } from './api-client.js';

interface TableState {
  table: string;
  state: string;
  semanticReady: boolean;
  job?: { status: string; error: unknown };
}

/**
 * Polls getDatabaseIndex until every indexable table (all, or those named) is `ready` with no sync left queued or
 * running (and embedded, when `semantic`); a failed sync fails the wait with its error.
 */
export async function waitForIndex(
  client: ApiClient,
  token: string,
  databaseId: string,
  options: { tables?: string[]; semantic?: boolean; timeoutMs?: number } = {},
): Promise<TableState[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const res = await client.get(`/api/v1/databases/${databaseId}/index`, { token });
    if (res.status !== 200) throw new Error(`getDatabaseIndex: ${res.status} ${JSON.stringify(res.body)}`);
    const tables = (res.body.data.tables as TableState[])
      .filter((t) => t.state !== 'not_indexed' && (!options.tables || options.tables.includes(t.table)));
    const failed = tables.find((t) => t.job?.status === 'failed');
    if (failed) throw new Error(`sync of ${failed.table} failed: ${JSON.stringify(failed.job)}`);
    const settled = tables.every((t) => t.state === 'ready' && !['queued', 'running'].includes(t.job?.status ?? '') && (!options.semantic || t.semanticReady));
    if (tables.length > 0 && settled) return tables;
    if (Date.now() > deadline) throw new Error(`the index of ${databaseId} did not settle: ${JSON.stringify(tables)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Queues a sync of the connection's tables and waits until it has finished. */
export async function syncAndWait(client: ApiClient, token: string, databaseId: string, tables?: string[]): Promise<TableState[]> {
  const res = await client.post(`/api/v1/databases/${databaseId}/index/sync`, tables ? { tables } : {}, { token });
  if (res.status !== 202) throw new Error(`syncDatabaseIndex: ${res.status} ${JSON.stringify(res.body)}`);
  return waitForIndex(client, token, databaseId, { tables });
}
