/**
 * Stream mode's side on the source: how much WAL a PostgreSQL connection's replication slot keeps, and ending the
 * connection's stream with its slot and publication dropped (best effort: what could not be dropped is returned in
 * words to show the user, and logged). A MySQL/MariaDB binary log reader keeps nothing on the server: no slot to
 * measure or drop, only the reader to end.
 */
import type { ClientConfig } from 'pg';
import type { SqlExecutor } from '../../connectors/index.js';
import type { Logger } from '../../lib/logger.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';
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

  /** The WAL bytes the connection's slot keeps (null: no slot). */
  async lagBytes(record: DatabaseConnectionRecord): Promise<number | null> {
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
