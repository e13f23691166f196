/**
 * Stream mode's side on the source: how far the source is ahead of the index (the WAL a PostgreSQL connection's
 * replication slot keeps, the binary log a MySQL/MariaDB server wrote after the stored position), and ending the
 * connection's stream with its slot and publication dropped (best effort: what could not be dropped is returned in
 * words to show the user, and logged). A MySQL/MariaDB binary log reader keeps nothing on the server: no slot to
 * drop, only the reader to end.
 */
import type { ClientConfig } from 'pg';
import type { SqlExecutor } from '../../connectors/index.js';
import type { Logger } from '../../lib/logger.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
import { parseBinlogCursor } from './binlog-events.js';
import { binlogConnectionOptions, readBinlogLag } from './mysql-binlog.js';
import { dropStream, slotLagBytes, streamName } from './pg-stream.js';
import type { ChangeStreamer } from './streamer.js';

export interface StreamSlotsDeps {
  streamer: Pick<ChangeStreamer, 'end'>;
  executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
  replicationConfigFor(record: DatabaseConnectionRecord): Promise<ClientConfig>;
  logger: Pick<Logger, 'warn'>;
}

export class StreamSlots {
  constructor(private readonly deps: StreamSlotsDeps) {}

  /**
   * How far the source is ahead of what the index holds, in bytes: the WAL the connection's slot keeps (PostgreSQL),
   * or the binary log written after the stored position `changeCursor` (MySQL/MariaDB). Null: nothing to measure.
   */
  async lagBytes(record: DatabaseConnectionRecord, changeCursor: string | null = null): Promise<number | null> {
    if (record.engine === 'mysql') {
      const position = parseBinlogCursor(changeCursor);
      return position ? readBinlogLag(await binlogConnectionOptions(await this.deps.replicationConfigFor(record)), position) : null;
    }
    if (record.engine !== 'postgres') return null;
    return slotLagBytes(await this.deps.executorFor(record), streamName(record.id));
  }

  async drop(record: DatabaseConnectionRecord): Promise<string[]> {
    await this.deps.streamer.end(record.id);
    if (record.engine !== 'postgres') return [];
    const problems = await dropStream(await this.deps.replicationConfigFor(record), streamName(record.id));
    for (const problem of problems) this.deps.logger.warn({ connectionId: record.id }, problem);
    return problems;
  }
}
