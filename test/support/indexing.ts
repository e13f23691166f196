/**
 * Waiting on Quarry's search index through the API: a connection's tables are synced in the background
 * when it is made, so a test that means to read the index (or to start from a quiet one) waits for it first.
 */
import type { ApiClient } from './api-client.js';

/** A sync embeds with the real model on a shared machine: be generous. */
const WAIT_MS = 120_000;

type IndexedTable = { table: string; state: string; semantic: boolean; semanticReady: boolean; columnsReady: boolean; job?: { status: string; jobId: string } };

const live = (table: IndexedTable) => table.job?.status === 'queued' || table.job?.status === 'running';

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * getDatabaseIndex until no table has a queued or running sync, every indexable table has been synced, and the rows
 * of every synced table carry its chosen filter and sort columns (a change of them queues one more sync, maybe only
 * as the running one ends).
 */
export async function waitForIndex(client: ApiClient, token: string, databaseId: string): Promise<IndexedTable[]> {
  return poll(`index of ${databaseId}`, async () => {
    const res = await client.get(`/api/v1/databases/${databaseId}/index`, { token });
    if (res.status !== 200) throw new Error(`getDatabaseIndex answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data.tables as IndexedTable[];
  }, (tables) => tables.every((t) => !live(t) && t.state !== 'pending' && (t.state !== 'ready' || t.columnsReady)));
}

/** getIndexedTable until the table's newest sync has ended (and, with `semantic`, it is searched by meaning). */
export async function waitForTable(client: ApiClient, token: string, databaseId: string, table: string, semantic = false): Promise<IndexedTable> {
  return poll(`sync of ${table}`, async () => {
    const res = await client.get(`/api/v1/databases/${databaseId}/index/tables/${encodeURIComponent(table)}`, { token });
    if (res.status !== 200) throw new Error(`getIndexedTable answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as IndexedTable;
  }, (t) => !live(t) && (!semantic || t.semanticReady));
}
