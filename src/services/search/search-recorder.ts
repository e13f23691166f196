import type { components } from '../../../generated/openapi.js';
import { newId } from '../../lib/ids.js';
import type { SearchRecordRepository, SearchRecordRow } from '../../repositories/search-record-repository.js';
import { BatchWriter } from '../../lib/batch-writer.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { RollupSource } from '../../repositories/search-rollups.js';
import type { KeyCaller } from '../callers.js';

/**
 * What the search service reports once per search (POST /api/v1/search): what the roll-ups are computed from, and
 * which key, mode and connections it ran with.
 */
export interface SearchRecordInput extends RollupSource {
  keyId: string | null;
  searchMode: components['schemas']['SearchMode'];
  /** Connection ids the search ran on. */
  databases: string[];
}

/**
 * What one answered search records: who searched what, on which databases and tables, how many rows matched and how
 * long the caller waited, whether every database answered, and which tables were read without a full-text index.
 */
export function searchRecordOf(
  caller: KeyCaller,
  data: components['schemas']['SearchResponse']['data'],
  records: DatabaseConnectionRecord[],
  tables: string[],
  status: SearchRecordInput['status'],
  at: number,
): SearchRecordInput {
  return {
    userId: caller.user.id,
    keyId: caller.key.id,
    // Neither store keeps NUL in text (and one such row would fail the whole batch).
    query: data.query.replace(/\u0000/g, ''),
    searchMode: data.searchMode,
    databases: records.map((r) => r.id),
    tables,
    resultCount: data.total,
    responseTimeMs: data.tookMs,
    status,
    unindexedTables: data.unindexedTables.length > 0 ? data.unindexedTables : null,
    createdAt: new Date(at),
  };
}

export interface SearchRecorderDeps {
  records: Pick<SearchRecordRepository, 'insertMany'>;
  flushMs: number;
  onError(error: unknown): void;
  maxBuffered?: number;
  /** A failure the store will never get over (a constraint violation): the row is dropped, not retried. */
  isRejected?(error: unknown): boolean;
  /** Time source of the retry waits (tests). */
  now?: () => number;
  /** A user's search was buffered: it is not in the store yet, but this process's readers flush first. */
  onRecorded?(userId: string): void;
  /** These users' searches are in the store now. */
  onWritten?(userIds: string[]): void;
}

/**
 * Records searches for history, trends and analytics. `record` only buffers: rows are written in batches every
 * USAGE_FLUSH_MS and on shutdown, never on the request path. Readers call `flush` first to see their own searches.
 * A row's id is drawn when it is recorded, so a retried batch writes the same ids.
 */
export class SearchRecorder {
  private readonly writer: BatchWriter<SearchRecordRow>;

  constructor(private readonly deps: SearchRecorderDeps) {
    this.writer = new BatchWriter<SearchRecordRow>({
      write: async (batch) => {
        await deps.records.insertMany(batch);
        deps.onWritten?.([...new Set(batch.map((row) => row.userId))]);
      },
      flushMs: deps.flushMs,
      onError: deps.onError,
      label: 'search records',
      maxBuffered: deps.maxBuffered,
      isRejected: deps.isRejected,
      now: deps.now,
    });
  }

  start(): void {
    this.writer.start();
  }

  record(input: SearchRecordInput): void {
    this.writer.add({
      id: newId('srch'),
      userId: input.userId,
      keyId: input.keyId,
      query: input.query.slice(0, 500),
      searchMode: input.searchMode,
      databases: input.databases,
      tables: input.tables,
      resultCount: Math.max(0, Math.round(input.resultCount)),
      responseTimeMs: Math.max(0, Math.round(input.responseTimeMs)),
      status: input.status,
      unindexedTables: input.unindexedTables,
      createdAt: input.createdAt,
    });
    this.deps.onRecorded?.(input.userId);
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  /** What was kept, refused and dropped (tests, fault figures). */
  stats() {
    return this.writer.stats();
  }
}
