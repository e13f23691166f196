/**
 * startSemanticIndex, getSemanticIndexStatus and cancelSemanticIndex (openapi.yaml, Databases). Owner-scoped like
 * every database operation: another user's connection is the same 404 as an unknown one.
 */
import type { components } from '../../generated/openapi.js';
import type { TableSchema } from '../connectors/index.js';
import { AppError, validationError } from '../errors/app-error.js';
import { newId } from '../lib/ids.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import type { SemanticIndexJobRecord, SemanticIndexJobRepository } from '../repositories/semantic-index-job-repository.js';
import type { TierName } from '../rate-limit/index.js';
import type { UserCaller } from '../services/callers.js';
import { indexableProblem, tableId } from './row-text.js';
import { SEMANTIC_ROWS_PER_TABLE } from './tier-limits.js';

type SemanticIndexJob = components['schemas']['SemanticIndexJob'];

export interface SemanticIndexDeps {
  owned(userId: string, databaseId: string): Promise<DatabaseConnectionRecord>;
  tablesOf(record: DatabaseConnectionRecord): Promise<TableSchema[]>;
  planOf(userId: string): Promise<TierName>;
  jobs: SemanticIndexJobRepository;
  runner: { pump(): Promise<void>; abort(jobId: string): void };
  providerId: string;
  now?: () => number;
}

/** A table of the schema by the name a caller gave: exact first, then case-insensitive (`schema.table` allowed). */
export function findTable(tables: TableSchema[], name: string): TableSchema | null {
  const lower = name.toLowerCase();
  return tables.find((t) => tableId(t) === name) ?? tables.find((t) => tableId(t).toLowerCase() === lower) ?? null;
}

export class SemanticIndexService {
  private readonly now: () => number;

  constructor(private readonly deps: SemanticIndexDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** startSemanticIndex: 202 with a new queued job, or 200 with the table's live job when one is already under way. */
  async start(caller: UserCaller, databaseId: string, tableName: string): Promise<{ created: boolean; job: SemanticIndexJob }> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const table = await this.table(record, tableName);
    const problem = indexableProblem(table);
    if (problem) throw validationError([{ location: 'body', path: '/table', message: `names a table that ${problem}` }]);
    const tier = await this.deps.planOf(caller.user.id);
    const id = tableId(table);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const live = await this.deps.jobs.findLive(record.id, id);
      if (live) return { created: false, job: await this.view(live) };
      const created = await this.deps.jobs.createQueued({
        id: newId('sidx'), connectionId: record.id, tableName: id, providerId: this.deps.providerId, rowLimit: SEMANTIC_ROWS_PER_TABLE[tier],
      });
      if (created) {
        void this.deps.runner.pump();
        return { created: true, job: await this.view(created) };
      }
    }
    // Only reachable if jobs keep ending between the two reads above: a fault, not a caller's mistake.
    throw new Error(`could neither create nor find a live semantic index job for ${record.id}/${id}`);
  }

  /** getSemanticIndexStatus: the table's newest job with its progress. */
  async status(caller: UserCaller, databaseId: string, tableName: string): Promise<SemanticIndexJob> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    return this.view(await this.newest(record, tableName));
  }

  /** cancelSemanticIndex: stops a queued or running job; vectors already stored stay and a new start skips them. */
  async cancel(caller: UserCaller, databaseId: string, tableName: string): Promise<SemanticIndexJob> {
    const record = await this.deps.owned(caller.user.id, databaseId);
    const job = await this.newest(record, tableName);
    if (!(await this.deps.jobs.cancel(job.id, new Date(this.now())))) {
      throw new AppError('CONFLICT', `The table's latest index job is ${job.status}; there is nothing to cancel.`, { jobId: job.id, status: job.status });
    }
    this.deps.runner.abort(job.id);
    return this.view((await this.deps.jobs.findById(job.id)) ?? job);
  }

  private async table(record: DatabaseConnectionRecord, name: string): Promise<TableSchema> {
    const table = findTable(await this.deps.tablesOf(record), name);
    if (!table) {
      throw new AppError('NOT_FOUND', `No table "${name}" in this database's schema (refresh the schema if it is new).`, { resource: 'table', id: name });
    }
    return table;
  }

  private async newest(record: DatabaseConnectionRecord, name: string): Promise<SemanticIndexJobRecord> {
    const exact = await this.deps.jobs.latest(record.id, name);
    const job = exact ?? (await this.deps.jobs.latest(record.id, tableId(await this.table(record, name))));
    if (!job) throw new AppError('NOT_FOUND', `The table "${name}" has never been indexed for semantic search.`, { resource: 'semanticIndex', id: name });
    return job;
  }

  /** The wire shape, with rate (rows per second of the current run) and ETA derived from the stored progress. */
  private async view(job: SemanticIndexJobRecord): Promise<SemanticIndexJob> {
    const now = this.now();
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
    const finished = (await this.deps.jobs.latestDone([job.connectionId])).find((j) => j.tableName === job.tableName);
    return {
      jobId: job.id,
      databaseId: job.connectionId,
      table: job.tableName,
      status: job.status,
      providerId: job.providerId,
      rowsDone: job.rowsDone,
      rowsTotal: job.rowsTotal,
      rowLimit: job.rowLimit,
      truncated: job.truncated,
      rowsEmbedded: job.rowsEmbedded,
      rowsSkipped: job.rowsSkipped,
      rowsDeleted: job.rowsDeleted,
      ratePerSecond: ratePerSecond === null ? null : Math.round(ratePerSecond * 10) / 10,
      etaSeconds,
      searchable: finished?.providerId === this.deps.providerId,
      error: job.error ?? null,
      createdAt: job.createdAt.toISOString(),
      startedAt: job.startedAt?.toISOString() ?? null,
      finishedAt: job.finishedAt?.toISOString() ?? null,
    };
  }
}
