/**
 * The Indexing tag's response shapes, made from the stored records in one place: a table's index state, a sync job
 * with its rate and ETA, and the older semantic-index job shape the deprecated operations still answer with.
 */
import type { components } from '../../../generated/openapi.js';
import type { TableSchema } from '../../connectors/index.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexJobRecord } from '../../repositories/index-job-repository.js';
import type { IndexTableRecord } from '../../repositories/index-table-repository.js';
import { indexableProblem, tableId } from '../../search-index/documents.js';
import { columnsReady, eligibleColumns } from '../../search-index/filter-columns.js';
import { binlogPositionView } from '../../search-index/changes/binlog-events.js';
import { indexedAsOf, lagSeconds } from '../../search-index/changes/freshness.js';
import { DEFAULT_POLL_INTERVAL_SECONDS } from '../../search-index/changes/poller.js';
import { semanticReady } from '../../search-index/readiness.js';

type IndexJob = components['schemas']['IndexJob'];
type IndexedTable = components['schemas']['IndexedTable'];
type SemanticIndexJob = components['schemas']['SemanticIndexJob'];

/** What a table's view is made of besides the table: its index entry and newest job, if any, and the account's. */
export interface TableViewInput {
  record: DatabaseConnectionRecord;
  table: TableSchema;
  indexed: IndexTableRecord[];
  jobs: IndexJobRecord[];
  rowLimit: number;
  /** The slot's retained WAL bytes when a table of the connection streams. */
  streamLagBytes: number | null;
  providerId: string;
  now: number;
}

export function tableView({ record, table, indexed, jobs, rowLimit, streamLagBytes, providerId, now }: TableViewInput): IndexedTable {
  const name = tableId(table);
  const entry = indexed.find((t) => t.tableName === name) ?? null;
  const job = jobs.find((j) => j.tableName === name) ?? null;
  const problem = indexableProblem(table);
  const reason = problem ? `The table ${problem}.`
    : !record.indexEnabled ? 'Indexing is off for this connection; the table is searched live.'
      : null;
  const state: IndexedTable['state'] = reason !== null || !entry ? 'not_indexed'
    : entry.syncedAt ? 'ready'
      : job?.status === 'failed' ? 'failed' : 'pending';
  return {
    table: name,
    state,
    reason,
    semantic: entry?.semantic ?? false,
    filterableColumns: entry?.filterableColumns ?? [],
    sortableColumns: entry?.sortableColumns ?? [],
    eligibleColumns: problem ? [] : eligibleColumns(table),
    semanticReady: semanticReady(entry, providerId),
    columnsReady: Boolean(entry?.syncedAt && columnsReady(entry)),
    rows: entry?.rows ?? 0,
    rowLimit,
    truncated: entry?.truncated ?? false,
    syncedAt: entry?.syncedAt?.toISOString() ?? null,
    sourceAsOf: entry?.syncStartedAt?.toISOString() ?? null,
    changeColumn: entry?.changeColumn ?? null,
    pollIntervalSeconds: entry?.changeColumn ? (entry.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS) : null,
    mode: entry?.changeStream ? 'stream' : entry?.changeColumn ? 'poll' : 'snapshot',
    lagSeconds: state === 'ready' && entry ? lagSeconds(indexedAsOf(entry), now) : null,
    lagBytes: entry?.changeStream ? streamLagBytes : null,
    binlogPosition: entry?.changeStream && record.engine === 'mysql' ? binlogPositionView(entry.changeCursor) : null,
    lastError: entry?.changeError ?? null,
    ...(job ? { job: jobView(job, now) } : {}),
  };
}

/** The wire shape, with rate (rows per second of the current run) and ETA derived from the stored progress. */
export function jobView(job: IndexJobRecord, now: number): IndexJob {
  let ratePerSecond: number | null = null;
  let etaSeconds: number | null = null;
  if (job.status === 'running' && job.resumedAt) {
    const seconds = ((job.heartbeatAt?.getTime() ?? now) - job.resumedAt.getTime()) / 1000;
    const rows = job.rowsDone - job.rowsAtResume;
    if (seconds > 0 && rows > 0) ratePerSecond = rows / seconds;
    if (ratePerSecond && job.rowsTotal !== null) etaSeconds = Math.ceil(Math.max(0, job.rowsTotal - job.rowsDone) / ratePerSecond);
  } else if (job.status === 'done' && job.startedAt && job.finishedAt) {
    const seconds = (job.finishedAt.getTime() - job.startedAt.getTime()) / 1000;
    if (seconds > 0) ratePerSecond = job.rowsDone / seconds;
    etaSeconds = 0;
  }
  return {
    jobId: job.id,
    databaseId: job.connectionId,
    table: job.tableName,
    status: job.status,
    trigger: job.trigger,
    semantic: job.semantic,
    providerId: job.providerId,
    rowsDone: job.rowsDone,
    rowsTotal: job.rowsTotal,
    rowLimit: job.rowLimit,
    truncated: job.truncated,
    rowsWritten: job.rowsWritten,
    rowsEmbedded: job.rowsEmbedded,
    rowsSkipped: job.rowsSkipped,
    rowsDeleted: job.rowsDeleted,
    rowsOversize: job.rowsOversize,
    attempts: job.attempts,
    ratePerSecond: ratePerSecond === null ? null : Math.round(ratePerSecond * 10) / 10,
    etaSeconds,
    error: job.error ?? null,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}

/** The fields of a job the older semantic-index shape does not have; the compiler checks the list is exactly that. */
type NotInSemanticShape = Exclude<keyof IndexJob, keyof SemanticIndexJob>;
const notInSemanticShape = ['trigger', 'semantic', 'rowsWritten', 'rowsOversize', 'attempts'] as const satisfies readonly NotInSemanticShape[];
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const listsEveryField: Exactly<NotInSemanticShape, (typeof notInSemanticShape)[number]> = true;
void listsEveryField;

/**
 * A job in the shape of the deprecated semantic-index operations: the job's own view without what that shape never
 * had, its model named even before the job chose one, and whether the table answers semantic search now.
 */
export function semanticJobView(view: IndexJob, entry: IndexTableRecord | null, providerId: string): SemanticIndexJob {
  const shared: Partial<IndexJob> = { ...view };
  for (const field of notInSemanticShape) delete shared[field];
  return { ...(shared as Omit<IndexJob, NotInSemanticShape>), providerId: view.providerId ?? providerId, searchable: semanticReady(entry, providerId) };
}
