/**
 * Stream mode in one process: each PostgreSQL connection with streamed tables is read through its replication slot
 * (pg-stream.ts), each MySQL/MariaDB one through the server's binary log (mysql-binlog.ts), by one process at a time,
 * whatever processes run. The stream is claimed in the store on every
 * streamed table of the connection, as a poll claims its table, and kept by a heartbeat; a process that dies loses
 * its streams to the others once its heartbeat is stale, and they resume from the stored position.
 *
 * A slot made now (the first start, or the slot was dropped behind Quarry's back) holds no change from before it:
 * the tables are reconciled by a full sync, queued here, so that nothing between the last sync and the slot is lost.
 * A stream that cannot run (no logical WAL, no grant) says why in the tables' last error and is tried again a minute
 * later; the tables keep their full syncs meanwhile.
 */
import type { ClientConfig } from 'pg';
import type { SqlExecutor, TableSchema } from '../../connectors/index.js';
import { isConnectorError } from '../../connectors/index.js';
import type { EmbeddingProvider } from '../../embeddings/provider.js';
import { AppError } from '../../errors/app-error.js';
import { ChangeFollowers, type ChangeFollowersDeps } from './change-followers.js';
import type { Logger } from '../../lib/logger.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import type { IndexTableChanges, IndexTableRecord, IndexTableRepository } from '../../repositories/index-table-repository.js';
import { tableId } from '../documents.js';
import { indexedColumns } from '../filter-columns.js';
import { spaceName, type IndexStore } from '../index-store.js';
import { isIndexStorageFailure } from '../storage-failures.js';
import { binlogCursor, formatBinlogPosition, parseBinlogCursor } from './binlog-events.js';
import { BinlogChangeStream, binlogConnectionOptions, binlogServerId, prepareBinlog } from './mysql-binlog.js';
import { PgChangeStream, prepareStream, StreamError, streamName } from './pg-stream.js';
import type { StreamedRun } from './change-batcher.js';
import type { ConnectionCatalog } from '../../search-core/connection-catalog.js';

/** How long a stream that could not run waits before it is tried again. */
export const STREAM_RETRY_MS = 60_000;

export interface ChangeStreamerDeps extends ChangeFollowersDeps {
  tables: Pick<IndexTableRepository, 'dueStreams' | 'claimStream' | 'streamProgress' | 'touchPolls' | 'releasePolls' | 'listByConnections'>;
  store: Pick<IndexStore, 'ensureSpace'>;
  provider: EmbeddingProvider;
  findConnection(id: string): Promise<DatabaseConnectionRecord | null>;
  /** The connections' tables: as last discovered, or `fresh` to discover again (new and dropped tables). */
  catalog: Pick<ConnectionCatalog, 'tables'>;
  replicationConfigFor(record: DatabaseConnectionRecord): Promise<ClientConfig>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  /** Queues a full sync of the table. */
  reconcile(record: DatabaseConnectionRecord, tableName: string): Promise<void>;
  onApplied(connectionId: string): void;
  logger: Pick<Logger, 'warn' | 'error'>;
  retryMs?: number;
  /** How long a change waits at most for its batch. */
  flushMs?: number;
  queryTimeoutMs?: number;
}

interface ActiveStream {
  ids: string[];
  stream: Pick<PgChangeStream, 'stop' | 'abandon'> | null;
  finished: Promise<void>;
  stopping: boolean;
}

function safeError(error: unknown): { code: string; message: string } {
  if (error instanceof StreamError || error instanceof AppError) return { code: error.code, message: error.message };
  if (isConnectorError(error)) return error.toSafeError();
  if (isIndexStorageFailure(error)) return { code: 'INDEX_UNAVAILABLE', message: "The search index's storage did not answer; the stream is started again." };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'STREAM_FAILED', message: `The replication stream stopped (${message.slice(0, 300)}); it is started again from the stored position.` };
}

export class ChangeStreamer extends ChangeFollowers<ActiveStream> {
  constructor(private readonly deps: ChangeStreamerDeps) {
    super(deps, 'change streamer');
  }

  protected heldIds(): string[] {
    return [...this.active.values()].flatMap((a) => a.ids);
  }

  /** Claims the streams that are due and starts them; ends a stream whose set of tables changed (it is claimed again). */
  protected async claimDue(): Promise<void> {
    if (this.stopping) return;
    const now = this.now();
    for (const [connectionId, active] of this.active) {
      const ids = (await this.deps.tables.listByConnections([connectionId])).filter((t) => t.changeStream).map((t) => t.id).sort();
      if (ids.join() !== active.ids.join()) void this.end(connectionId);
    }
    for (const connectionId of await this.deps.tables.dueStreams(new Date(now), new Date(now - this.deps.staleMs))) {
      if (this.stopping || this.active.has(connectionId)) continue;
      const claimed = await this.deps.tables.claimStream(connectionId, this.owner, new Date(this.now()), new Date(this.now() - this.deps.staleMs));
      if (claimed) this.launch(connectionId, claimed);
    }
  }

  /** The connections this process streams now (tests). */
  streaming(): string[] {
    return [...this.active.keys()];
  }

  /** Graceful stop: streams end and are handed back, their positions kept for whoever reads next. */
  async stop(): Promise<void> {
    await this.halt();
    await Promise.all([...this.active.keys()].map((id) => this.end(id)));
  }

  /**
   * Stops as a process that dies does: heartbeats end and the replication connections are cut, nothing is handed
   * back or stored (another process takes the streams over once the heartbeat is stale).
   */
  async abandon(): Promise<void> {
    await this.halt();
    const running = [...this.active.values()];
    for (const active of running) await active.stream?.abandon();
    await Promise.all(running.map((active) => active.finished));
  }

  /** Ends a connection's stream here (stream mode turned off, the connection removed): resolves once it let go. */
  async end(connectionId: string): Promise<void> {
    const active = this.active.get(connectionId);
    if (!active) return;
    active.stopping = true;
    await active.stream?.stop();
    await active.finished;
  }

  private launch(connectionId: string, claimed: IndexTableRecord[]): void {
    const active: ActiveStream = { ids: claimed.map((t) => t.id).sort(), stream: null, finished: Promise.resolve(), stopping: false };
    this.active.set(connectionId, active);
    active.finished = this.run(connectionId, claimed, active)
      .catch((error) => this.deps.logger.error({ err: error, connectionId }, 'stream bookkeeping failed'))
      .finally(() => {
        this.active.delete(connectionId);
      });
  }

  private async run(connectionId: string, claimed: IndexTableRecord[], active: ActiveStream): Promise<void> {
    const ids = active.ids;
    const release = (changes: IndexTableChanges = {}) => this.deps.tables.releasePolls(ids, this.owner, changes);
    const retryAt = () => new Date(this.now() + (this.deps.retryMs ?? STREAM_RETRY_MS));
    try {
      const record = await this.deps.findConnection(connectionId);
      if (!record || !record.indexEnabled) return await release({ nextPollAt: retryAt() });
      if (record.engine === 'mysql') return await this.runBinlog(record, claimed, active, release);
      if (record.engine !== 'postgres') {
        return await release({ nextPollAt: retryAt(), changeError: { code: 'STREAM_NOT_ALLOWED', message: "Stream mode reads PostgreSQL's logical replication or a MySQL/MariaDB binary log; this connection follows full syncs or a change column." } });
      }
      const entries = await this.claimedTables(record, claimed);
      const name = streamName(record.id);
      const clientConfig = await this.deps.replicationConfigFor(record);
      const { slotCreated } = await prepareStream(clientConfig, name, entries.map((e) => e.table), this.deps.queryTimeoutMs ?? 30_000);
      const stored = claimed.map((t) => t.changeCursor).find((cursor) => cursor !== null);
      let fromLsn = stored ? (JSON.parse(stored) as string) : null;
      if (slotCreated) {
        // The slot holds changes from now on only: a full sync reads everything before.
        fromLsn = null;
        for (const { entry } of entries) await this.deps.reconcile(record, entry.tableName);
        if (stored) {
          await this.deps.tables.streamProgress(ids, this.owner, {
            changeCursor: null,
            changeError: { code: 'STREAM_SLOT_LOST', message: `The replication slot ${name} was dropped outside Quarry: it was made again and the tables are re-read in full.` },
          });
        }
      }
      const stream = new PgChangeStream({
        ...(await this.streamedRun(record, claimed, entries)),
        clientConfig, name, fromLsn,
        saveLsn: (lsn) => this.deps.tables.streamProgress(ids, this.owner, { changeCursor: JSON.stringify(lsn), changesAsOf: new Date(this.now()), pollHeartbeatAt: new Date(this.now()), changeError: null }),
      });
      active.stream = stream;
      if (active.stopping) return await release();
      stream.start();
      const end = await stream.done;
      if (end.status !== 'failed') {
        // Lost: another process holds the stream now. Stopped: handed back, its position kept.
        if (end.status === 'stopped') await release();
        return;
      }
      const error = safeError(end.error);
      this.deps.logger.warn({ err: end.error, connectionId }, 'replication stream ended');
      await release({ changeError: error, nextPollAt: new Date(this.now() + 5000) });
    } catch (error) {
      const stored = safeError(error);
      if (stored.code === 'STREAM_FAILED') this.deps.logger.error({ err: error, connectionId }, 'stream failed');
      await release({ changeError: stored, nextPollAt: retryAt() });
    }
  }

  /** The claimed tables the connection still has, with their schemas as last discovered. */
  private async claimedTables(record: DatabaseConnectionRecord, claimed: IndexTableRecord[]): Promise<Array<{ entry: IndexTableRecord; table: TableSchema }>> {
    const schemas = await this.deps.catalog.tables(record);
    return claimed.flatMap((entry) => {
      const table = schemas.find((t) => tableId(t) === entry.tableName);
      return table ? [{ entry, table }] : [];
    });
  }

  /** What either reader is given of its run: the space, the tables and their columns, and what follows a batch. */
  private async streamedRun(record: DatabaseConnectionRecord, claimed: IndexTableRecord[], entries: Array<{ entry: IndexTableRecord; table: TableSchema }>): Promise<StreamedRun> {
    const space = spaceName(record.userId, record.environment);
    const indexed = await this.deps.store.ensureSpace(space);
    return {
      executor: await this.deps.executorFor(record),
      space: indexed,
      flushMs: this.deps.flushMs,
      queryTimeoutMs: this.deps.queryTimeoutMs,
      tables: entries.map(({ entry, table }) => ({
        src: entry.id, table,
        columns: indexedColumns(table, [...(entry.filterableColumns ?? []), ...(entry.sortableColumns ?? [])]),
        provider: entry.semantic ? this.deps.provider : null,
      })),
      reconcile: async (src) => {
        const entry = claimed.find((t) => t.id === src);
        if (!entry) return null;
        await this.deps.reconcile(record, entry.tableName);
        return (await this.deps.catalog.tables(record, true)).find((t) => tableId(t) === entry.tableName) ?? null;
      },
      // Rows written by the stream are searched by a scan until the space's indexes take them in: folded once
      // there are enough of them or they waited long enough, between batches (one writer at a time).
      afterBatch: (rows) => this.folds.wrote(space, indexed, rows),
      onApplied: () => this.deps.onApplied(record.id),
    };
  }

  /**
   * A MySQL/MariaDB connection's stream, through the server's binary log (mysql-binlog.ts). A first start, or a
   * stored position the server no longer has, begins at the server's current end: the tables are reconciled by a
   * full sync (it reads what came before), and the start is stored at once so that a restart does not skip past it.
   */
  private async runBinlog(record: DatabaseConnectionRecord, claimed: IndexTableRecord[], active: ActiveStream, release: (changes?: IndexTableChanges) => Promise<void>): Promise<void> {
    const ids = active.ids;
    const entries = await this.claimedTables(record, claimed);
    const connection = await binlogConnectionOptions(await this.deps.replicationConfigFor(record));
    const stored = parseBinlogCursor(claimed.map((t) => t.changeCursor).find((cursor) => cursor !== null));
    const start = await prepareBinlog(connection, stored, this.deps.queryTimeoutMs ?? 30_000);
    // Shown for the whole run that found the position lost: the tables were re-read from that moment.
    const lost = start.lost && {
      code: 'STREAM_POSITION_LOST',
      message: `The stored binary log position ${formatBinlogPosition(start.lost)} was no longer on the server (its logs purged) at ${new Date(this.now()).toISOString()}: the tables were re-read in full by a sync and the stream went on from ${formatBinlogPosition(start.from)}.`,
    };
    // A table that joins a connection already streamed has no position of its own: it is re-read too.
    const unread = start.fresh || lost ? entries : entries.filter(({ entry }) => entry.changeCursor === null);
    if (unread.length > 0) {
      for (const { entry } of unread) await this.deps.reconcile(record, entry.tableName);
      await this.deps.tables.streamProgress(ids, this.owner, { changeCursor: binlogCursor(start.from), changeError: lost || null, pollHeartbeatAt: new Date(this.now()) });
    }
    const stream = new BinlogChangeStream({
      ...(await this.streamedRun(record, claimed, entries)),
      connection,
      schema: record.database,
      serverId: binlogServerId(record.id),
      from: start.from,
      savePosition: (position) => this.deps.tables.streamProgress(ids, this.owner, { changeCursor: binlogCursor(position), changesAsOf: new Date(this.now()), pollHeartbeatAt: new Date(this.now()), changeError: lost || null }),
    });
    active.stream = stream;
    if (active.stopping) return await release();
    stream.start();
    const end = await stream.done;
    if (end.status === 'stopped') await release();
    if (end.status !== 'failed') return;
    this.deps.logger.warn({ err: end.error, connectionId: record.id }, 'binary log stream ended');
    // The server no longer has the position read from: the next start reconciles and begins at its end.
    const gone = end.error instanceof StreamError && end.error.code === 'STREAM_POSITION_LOST';
    const position = gone ? parseBinlogCursor((await this.deps.tables.listByConnections([record.id])).find((t) => ids.includes(t.id))?.changeCursor) : null;
    await release({ changeError: safeError(end.error), nextPollAt: new Date(this.now() + 5000), ...(position ? { changeCursor: binlogCursor({ ...position, gone: true }) } : {}) });
  }
}
