/**
 * Stream mode on MySQL and MariaDB: a connection's tables follow the server's row-based binary log, read as a
 * replica reads it (@vlasky/zongji), one reader per connection.
 *
 * As on PostgreSQL, a change names a row, and the row is read again by its primary key with the bounded SELECT a
 * sync uses (a key the source no longer has is a delete). Changes are gathered over transactions and written in
 * batches; the position after the last transaction written (file and offset, with its GTID, and the server's executed
 * GTIDs when known) is stored only once its batch is in the index: a process that stops or dies is resumed from the
 * stored position, and the transactions after it come again (at-least-once), costing a read, not a write. A position
 * with executed GTIDs is resumed by them, so a stream follows a failover to another server of the topology, whose
 * log files have other names and offsets.
 *
 * The binary log carries no row for a TRUNCATE, and a column added or dropped changes every row's stored fields:
 * such a statement on a streamed table hands the table to a reconcile (a full sync). A stored position the server
 * no longer has (its logs purged) loses the changes between: the tables are reconciled and the stream starts again
 * from the server's current end.
 */
import net from 'node:net';
import type { ClientConfig } from 'pg';
import mysql, { type ConnectionOptions } from 'mysql2/promise';
import ZongJi, { type AnyBinlogEvent } from '@vlasky/zongji';
import { binlogKey, binlogLagBytes, changedImages, compareBinlogPositions, looseKey, statementTargets, type BinlogPosition, type RowsEventName } from './binlog-events.js';
import { BatchedChangeStream, writeBatch, type PendingKeys, type StreamedRun, type StreamedTable } from './change-batcher.js';
import { StreamError } from './pg-stream.js';

/**
 * The settings of a reader's connections, from those of the saved connection: the socket goes to the address the
 * host policy checked, `host` only names the server for TLS; local files are never offered to the server.
 */
export async function binlogConnectionOptions(config: ClientConfig): Promise<ConnectionOptions> {
  const address = config.host ?? '127.0.0.1';
  const port = config.port ?? 3306;
  const tls = typeof config.ssl === 'object' ? config.ssl : null;
  const password = typeof config.password === 'function' ? await config.password() : config.password;
  return {
    host: tls?.servername ?? address,
    port,
    stream: () => net.connect({ host: address, port }),
    user: config.user ?? '',
    password: password ?? '',
    database: config.database,
    ...(tls ? { ssl: { rejectUnauthorized: true, verifyIdentity: true } } : {}),
    connectTimeout: config.connectionTimeoutMillis ?? 10_000,
    supportBigNumbers: true,
    flags: ['-LOCAL_FILES'],
  };
}

/**
 * A replica's server id, one per connection: the server ends an older reader that uses the same id, so a process
 * that takes a stream over pushes out a dead reader's connection. Kept far from the small ids servers are given.
 */
export function binlogServerId(connectionId: string): number {
  let hash = 2166136261;
  for (const char of connectionId) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return 1_000_000 + (hash % 2_000_000_000);
}

type Row = Record<string, unknown>;

function errnoOf(error: unknown): number | null {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : null;
}

/** Access denied to the binary log (REPLICATION SLAVE / CLIENT, or BINLOG MONITOR on MariaDB). */
const ACCESS_DENIED = new Set([1045, 1142, 1227, 1370]);
/** The server cannot send from the asked position: the log was purged or the position is not in it. */
export const POSITION_GONE = 1236;

/** A stream error as the table shows it: a refused grant or a position gone, else the error itself. */
export function binlogStreamError(error: unknown, user: string): unknown {
  const errno = errnoOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (errno !== null && ACCESS_DENIED.has(errno)) {
    return new StreamError('STREAM_NOT_ALLOWED', `The user ${user} may not read the binary log (${message.slice(0, 200)}): run GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ${user}; The table follows full syncs (or its change column) meanwhile.`);
  }
  if (errno === POSITION_GONE) {
    return new StreamError('STREAM_POSITION_LOST', `The server no longer has the binary log position Quarry stored (${message.slice(0, 200)}): the tables are re-read in full and the stream starts again from the server's current position.`);
  }
  return error;
}

export interface BinlogStart {
  /** Where the stream starts: the stored position, or the server's current end. */
  from: BinlogPosition;
  /** No position was stored (a first start): the tables are reconciled, nothing before `from` is in the stream. */
  fresh: boolean;
  /** A position was stored but the server's logs no longer hold it (purged): what is lost must be reconciled. */
  lost: BinlogPosition | null;
}

/**
 * Checks that the server writes a row-based binary log and that the user may read it, then says where the stream
 * starts. Anything missing is a STREAM_NOT_ALLOWED error that says what to set or grant.
 */
export async function prepareBinlog(options: ConnectionOptions, stored: BinlogPosition | null, timeoutMs = 30_000): Promise<BinlogStart> {
  const connection = await mysql.createConnection({ ...options, connectTimeout: Math.min(timeoutMs, options.connectTimeout ?? timeoutMs) });
  const query = async <R = Row>(sql: string): Promise<R[]> => (await connection.query({ sql, timeout: timeoutMs }))[0] as R[];
  try {
    const [server] = await query<{ logBin: unknown; format: string | null; user: string; version: string }>('SELECT @@log_bin AS logBin, @@binlog_format AS format, CURRENT_USER() AS user, VERSION() AS version');
    const user = quoteAccount(server?.user ?? 'quarry@%');
    if (Number(server?.logBin) !== 1) {
      throw new StreamError('STREAM_NOT_ALLOWED', "The server writes no binary log (log_bin is OFF): set log_bin, binlog_format=ROW, server_id and binlog_row_image=FULL in its configuration and restart it. The table follows full syncs (or its change column) meanwhile.");
    }
    if (String(server?.format).toUpperCase() !== 'ROW') {
      throw new StreamError('STREAM_NOT_ALLOWED', `The server logs changes as ${server?.format ?? 'statements'}, not rows: run SET GLOBAL binlog_format = 'ROW'; (and set binlog_format=ROW in its configuration). The table follows full syncs (or its change column) meanwhile.`);
    }
    let logs: Array<{ Log_name: string; File_size: unknown }>;
    try {
      logs = await query('SHOW BINARY LOGS');
    } catch (error) {
      throw binlogStreamError(error, user);
    }
    const grants = (await query<Row>('SHOW GRANTS')).map((row) => String(Object.values(row)[0] ?? ''));
    if (!grantsReplication(grants)) {
      throw new StreamError('STREAM_NOT_ALLOWED', `The user ${user} may not read the binary log as a replica: run GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ${user}; The table follows full syncs (or its change column) meanwhile.`);
    }
    const last = logs.at(-1);
    if (!last) throw new StreamError('STREAM_NOT_ALLOWED', 'The server lists no binary log file (SHOW BINARY LOGS is empty): check log_bin in its configuration.');
    const executed = await executedGtids(query, /mariadb/i.test(server?.version ?? ''));
    if (stored && !stored.gone) {
      // Executed GTIDs name the place on any server of the topology: the server finds it (or answers that its logs
      // no longer hold it, and the stream ends with the position lost). A file and offset only on the server that wrote them.
      if (stored.gtidSet && executed !== null) return { from: stored, fresh: false, lost: null };
      const kept = logs.find((log) => log.Log_name === stored.file);
      if (kept && stored.position <= Number(kept.File_size)) return { from: stored, fresh: false, lost: null };
    }
    const gtid = await query<{ gtid: unknown }>('SELECT @@gtid_binlog_pos AS gtid').then((rows) => (rows[0]?.gtid ? String(rows[0].gtid) : null), () => null);
    // Transactions between reading the logs and the GTIDs are in the reconcile that such a start runs: read twice at most.
    const end: BinlogPosition = { file: last.Log_name, position: Number(last.File_size), gtid, ...(executed ? { gtidSet: executed } : {}) };
    // A stored file gone (purged), or a position past its end (a file of the same name made again): lost.
    return { from: end, fresh: stored === null, lost: stored };
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/**
 * The server's executed GTIDs in the form its replication protocol takes them (what the reader resumes from):
 * MariaDB's GTID position (GTIDs are always on there), MySQL's GTID set when gtid_mode is ON; null otherwise.
 */
async function executedGtids(query: <R = Row>(sql: string) => Promise<R[]>, mariadb: boolean): Promise<string | null> {
  const sql = mariadb
    ? 'SELECT @@GLOBAL.gtid_current_pos AS executed'
    : "SELECT IF(@@GLOBAL.gtid_mode = 'ON', @@GLOBAL.gtid_executed, NULL) AS executed";
  const [row] = await query<{ executed: unknown }>(sql).catch(() => []);
  // MySQL lists a long set over several lines.
  const executed = typeof row?.executed === 'string' ? row.executed.replace(/\s/g, '') : '';
  return executed === '' ? null : executed;
}

/** The binary log bytes the server wrote after `position` (binlogLagBytes), read with the stream's own account. */
export async function readBinlogLag(options: ConnectionOptions, position: BinlogPosition, timeoutMs = 30_000): Promise<number | null> {
  const connection = await mysql.createConnection({ ...options, connectTimeout: Math.min(timeoutMs, options.connectTimeout ?? timeoutMs) });
  try {
    const [logs] = await connection.query({ sql: 'SHOW BINARY LOGS', timeout: timeoutMs });
    return binlogLagBytes(logs as Array<{ Log_name: string; File_size: unknown }>, position);
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/** `'user'@'host'` from CURRENT_USER()'s `user@host`. */
function quoteAccount(account: string): string {
  const at = account.lastIndexOf('@');
  const [user, host] = at >= 0 ? [account.slice(0, at), account.slice(at + 1)] : [account, '%'];
  return `'${user.replace(/'/g, "''")}'@'${host.replace(/'/g, "''")}'`;
}

/**
 * Whether the account's grants let it read the log as a replica: REPLICATION SLAVE (REPLICA) or ALL on `*.*`. A role
 * may carry the grant where SHOW GRANTS does not show it: then the server's answer to the reader decides.
 */
export function grantsReplication(grants: string[]): boolean {
  return grants.some((grant) => /^GRANT\s+`/i.test(grant) || (/\bON\s+\*\.\*/i.test(grant) && /\b(ALL PRIVILEGES|REPLICATION (SLAVE|REPLICA))\b/i.test(grant)));
}

export interface BinlogRun extends StreamedRun {
  connection: ConnectionOptions;
  /** The database whose tables stream (the connection's). */
  schema: string;
  serverId: number;
  from: BinlogPosition;
  /** Stores the position after a batch is in the index; false when this process no longer holds the stream. */
  savePosition(position: BinlogPosition): Promise<boolean>;
  /** How often an idle stream asks the server whether it has read everything (default 10 s). */
  keepaliveMs?: number;
}

/** One connection's binary log stream in this process: started by `start`, ended by `stop` (or by losing it). */
export class BinlogChangeStream extends BatchedChangeStream {
  private readonly reader: ZongJi;
  private readonly byName = new Map<string, StreamedTable>();
  private received: BinlogPosition | null = null;
  /** The position last stored. */
  private confirmed: BinlogPosition;
  /**
   * Whether `confirmed` is a place in this server's log. Not after a start from executed GTIDs, until this stream
   * stores a position it read: the stored file and offset may be another server's (a failover), not comparable.
   */
  private confirmedHere: boolean;
  private keepalive: NodeJS.Timeout | null = null;
  private control: Promise<mysql.Connection> | null = null;
  readonly applied = { written: 0, deleted: 0, reconciled: 0 };

  constructor(private readonly run: BinlogRun) {
    super(run);
    for (const entry of run.tables) this.byName.set(entry.table.name, entry);
    this.confirmed = run.from;
    this.confirmedHere = !run.from.gtidSet;
    this.reader = new ZongJi(run.connection);
    this.reader.on('binlog', (event: AnyBinlogEvent) => {
      // The reader's resume pair moves with each event: read it now, it is past this event when the task runs.
      // The executed GTIDs take in a transaction at its commit, before the commit's event comes here.
      const executed = this.reader.gtidSet;
      const at: BinlogPosition = { file: String(this.reader.options.filename), position: Number(this.reader.options.position), gtid: event.gtid ?? null, ...(executed ? { gtidSet: executed } : {}) };
      void this.batcher.run(() => this.onEvent(event, at));
    });
    this.reader.on('error', (error: Error) => this.batcher.end({ status: 'failed', error: binlogStreamError(error, String(run.connection.user)) }));
  }

  /** Starts reading the log from the stored position: by its executed GTIDs when known, else by file and offset. */
  start(): void {
    const { from } = this.run;
    this.reader.start({
      serverId: this.run.serverId,
      ...(from.gtidSet ? { gtidSet: from.gtidSet } : { filename: from.file, position: from.position }),
      includeEvents: ['rotate', 'tablemap', 'writerows', 'updaterows', 'deleterows', 'xid', 'query'],
      includeSchema: { [this.run.schema]: [...this.byName.keys()] },
    });
    this.keepalive = setInterval(() => void this.batcher.run(() => this.caughtUp()), this.run.keepaliveMs ?? 10_000);
    this.keepalive.unref();
  }

  protected disconnect(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    void this.control?.then((connection) => connection.end()).catch(() => undefined);
    try {
      this.reader.stop();
    } catch {
      // Already closed.
    }
  }

  /**
   * With nothing gathered, a stream that has read the server's log to its end holds every change there is: the
   * position is stored again, so that the table's lag moves on while no transaction comes (a server with no writes
   * sends nothing else).
   */
  private async caughtUp(): Promise<void> {
    if (!this.batcher.idle) return;
    this.control ??= mysql.createConnection(this.run.connection);
    const logs = (await (await this.control).query({ sql: 'SHOW BINARY LOGS', timeout: this.run.queryTimeoutMs ?? 30_000 }))[0] as Array<{ Log_name: string; File_size: unknown }>;
    const end = logs.at(-1);
    // The reader's own resume pair moves past every event it was sent, those of other tables included.
    const read = { file: String(this.reader.options.filename), position: Number(this.reader.options.position) };
    if (!end || this.batcher.size > 0 || compareBinlogPositions(read, { file: end.Log_name, position: Number(end.File_size) }) < 0) return;
    const newer = this.received && this.after(this.received) ? this.received : null;
    const position = newer ?? this.confirmed;
    if (!(await this.run.savePosition(position))) {
      this.batcher.end({ status: 'lost' });
      return;
    }
    this.confirm(position, newer !== null);
  }

  private async onEvent(event: AnyBinlogEvent, at: BinlogPosition): Promise<void> {
    const name = event.getEventName();
    if (name === 'writerows' || name === 'updaterows' || name === 'deleterows') {
      const rows = event as unknown as { tableId: number; tableMap: Record<number, { parentSchema: string; tableName: string }>; rows: unknown[] };
      const map = rows.tableMap[rows.tableId];
      if (!map || map.parentSchema !== this.run.schema) return;
      const entry = this.byName.get(map.tableName);
      if (entry) for (const image of changedImages(name as RowsEventName, rows.rows)) this.touch(entry, image);
      return;
    }
    if (name === 'xid') return this.committed(at);
    if (name !== 'query') return;
    const query = event as unknown as { query: string; schema: string };
    if (/^\s*BEGIN\b/i.test(query.query)) return;
    const targets = statementTargets(query.query, query.schema, this.run.schema, [...this.byName.keys()]);
    if (targets.length > 0) {
      // Each table the statement names is re-read in full: its changes gathered before are in that read, and reading
      // them by key now would ask for the columns of before (a column dropped since fails the read). The other
      // tables' changes are written first.
      for (const name of targets) {
        const entry = this.byName.get(name);
        if (entry) this.batcher.drop(entry.src);
      }
      await this.batcher.flush();
      for (const name of targets) await this.reconcileTable(name);
    }
    return this.committed(at);
  }

  private async reconcileTable(name: string): Promise<void> {
    const entry = this.byName.get(name);
    if (!entry) return;
    const table = await this.run.reconcile(entry.src);
    this.applied.reconciled += 1;
    if (!table) {
      this.byName.delete(name);
      return;
    }
    entry.table = table;
  }

  /** Whether `position`, read from this server, is past the one last stored. */
  private after(position: BinlogPosition): boolean {
    return !this.confirmedHere || compareBinlogPositions(position, this.confirmed) > 0;
  }

  private confirm(position: BinlogPosition, readHere: boolean): void {
    this.confirmed = position;
    if (readHere) this.confirmedHere = true;
  }

  private async committed(at: BinlogPosition): Promise<void> {
    if (!at.file || !(at.position > 0)) return;
    this.received = at;
    return this.batcher.committed();
  }

  private touch(entry: StreamedTable, image: Row): void {
    const key = binlogKey(entry.table, image);
    if (!key) return;
    // A key is named by its values as text (looseKey): the log and a re-read may type a value differently.
    this.batcher.add(entry.src, looseKey(key), key);
  }

  /** Writes a batch of gathered changes to the index, then stores the last received position. */
  protected async write(pending: PendingKeys): Promise<void> {
    const batch = await writeBatch(this.run, pending, (src) => [...this.byName.values()].find((e) => e.src === src), (_table, key) => looseKey(key));
    this.applied.written += batch.written;
    this.applied.deleted += batch.deleted;
    if (batch.written + batch.deleted > 0) await this.run.afterBatch?.(batch.written + batch.deleted);
    if (batch.touched.length > 0) this.run.onApplied?.(batch.touched);
    const position = this.received;
    if (!position || !this.after(position)) return;
    if (!(await this.run.savePosition(position))) {
      this.batcher.end({ status: 'lost' });
      return;
    }
    this.confirm(position, true);
  }
}
