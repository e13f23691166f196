/**
 * Stream mode on PostgreSQL: a connection's tables follow the database's logical replication (the built-in
 * `pgoutput` plugin, no extension on the user's server) through one publication and one slot per connection.
 *
 * A change names a row; the row is then read again by its primary key with the same bounded SELECT a sync uses, so
 * the index holds exactly what a sync would write (values cut as a sync cuts them, TOASTed values an update did not
 * send included), and a key the source no longer has is a delete. Changes are gathered over transactions and written
 * in batches; the slot's position is stored, then confirmed to the server, only after the batch is in the index:
 * a process that stops or dies is resumed from the stored position, and the changes after the last confirmed one
 * come again (at-least-once), costing a read, not a write (rows are written by primary key, unchanged hashes
 * skipped).
 *
 * A TRUNCATE drops the table's rows from the index. A relation whose columns are no longer the discovered ones (a
 * column added or dropped) changes every row's stored fields: the table is handed to a reconcile (a full sync).
 */
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import pg, { type ClientConfig } from 'pg';
import type { SqlExecutor, TableSchema } from '../../connectors/index.js';
import { primaryKeyJson } from '../documents.js';
import { BatchedChangeStream, writeBatch, type PendingKeys, type StreamedRun, type StreamedTable } from './change-batcher.js';

/** Publication and slot of a connection, named so an operator recognises them: `quarry_<connection id>`. */
export function streamName(connectionId: string): string {
  return `quarry_${connectionId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
}

/** `0/16B3748` as a number, to compare positions. */
export function lsnValue(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high ?? '0'}`) << 32n) + BigInt(`0x${low ?? '0'}`);
}

/** Why a stream cannot run, in words to show in the table's `lastError` (a state, not an answer to a request). */
export class StreamError extends Error {
  constructor(readonly code: 'STREAM_NOT_ALLOWED' | 'STREAM_ENDED' | 'STREAM_SLOT_LOST' | 'STREAM_POSITION_LOST', message: string) {
    super(message);
  }
}

/** A query on the stream's own connection: Quarry's executors read only, and these statements write. */
type Admin = { query<Row = Record<string, unknown>>(sql: string, params: unknown[], options?: unknown): Promise<Row[]> };

async function withAdmin<T>(clientConfig: ClientConfig, timeoutMs: number, work: (admin: Admin) => Promise<T>): Promise<T> {
  const client = new pg.Client({ ...clientConfig, statement_timeout: timeoutMs, connectionTimeoutMillis: timeoutMs });
  await client.connect();
  try {
    return await work({ query: async <Row>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as Row[] });
  } finally {
    await client.end().catch(() => undefined);
  }
}

const quoteIdent = (value: string) => `"${value.replace(/"/g, '""')}"`;
const relationName = (table: Pick<TableSchema, 'schema' | 'name'>) => `${quoteIdent(table.schema ?? 'public')}.${quoteIdent(table.name)}`;

/**
 * Checks that the server and the role allow streaming, then creates or updates the connection's publication (for
 * exactly these tables) and its slot. Returns whether the slot was created now: a slot missing while Quarry had a
 * stored position was dropped behind its back, and the changes since are lost to the stream (a reconcile is due).
 * Anything missing is a STREAM_NOT_ALLOWED error that says what to run.
 */
export function prepareStream(clientConfig: ClientConfig, name: string, tables: TableSchema[], timeoutMs = 30_000): Promise<{ slotCreated: boolean }> {
  return withAdmin(clientConfig, timeoutMs, (executor) => prepare(executor, name, tables));
}

async function prepare(executor: Admin, name: string, tables: TableSchema[]): Promise<{ slotCreated: boolean }> {
  const timeout = {};
  const [wal] = await executor.query<{ wal_level: string }>('SHOW wal_level', [], timeout);
  if (wal?.wal_level !== 'logical') {
    throw new StreamError('STREAM_NOT_ALLOWED', `The server's wal_level is "${wal?.wal_level ?? 'unknown'}", not "logical": run ALTER SYSTEM SET wal_level = logical; and restart PostgreSQL. The table follows full syncs (or its change column) meanwhile.`);
  }
  const [role] = await executor.query<{ allowed: boolean; name: string }>('SELECT (rolreplication OR rolsuper) AS allowed, rolname AS name FROM pg_roles WHERE rolname = current_user', [], timeout);
  if (!role?.allowed) {
    throw new StreamError('STREAM_NOT_ALLOWED', `The role ${role?.name ?? 'of the connection'} may not read the server's changes: run ALTER ROLE ${quoteIdent(role?.name ?? 'quarry')} WITH REPLICATION; The table follows full syncs (or its change column) meanwhile.`);
  }
  const list = tables.map(relationName).join(', ');
  const [existing] = await executor.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM pg_publication WHERE pubname = $1', [name], timeout);
  const statement = Number(existing?.n ?? 0) > 0 ? `ALTER PUBLICATION ${quoteIdent(name)} SET TABLE ${list}` : `CREATE PUBLICATION ${quoteIdent(name)} FOR TABLE ${list}`;
  try {
    await executor.query(statement, [], timeout);
  } catch (error) {
    const code = (error as { cause?: { code?: string }; code?: string }).cause?.code ?? (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : '';
    if (code === '42501' || /permission denied|must be owner/i.test(message)) {
      throw new StreamError('STREAM_NOT_ALLOWED', `The role may not create the publication: grant it CREATE on the database and ownership of the tables, or have the tables' owner run ${statement}; then turn stream mode on again.`);
    }
    throw error;
  }
  const [slot] = await executor.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM pg_replication_slots WHERE slot_name = $1', [name], timeout);
  if (Number(slot?.n ?? 0) > 0) return { slotCreated: false };
  await executor.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [name], timeout);
  return { slotCreated: true };
}

/**
 * Drops the connection's slot and publication (stream mode turned off, the connection removed). A slot still read
 * by a process is let go first: its reader is ended. Best effort: returns what failed, for the caller to log and show.
 */
export async function dropStream(clientConfig: ClientConfig, name: string, timeoutMs = 30_000): Promise<string[]> {
  try {
    return await withAdmin(clientConfig, timeoutMs, (executor) => drop(executor, name));
  } catch (error) {
    return [`The server did not answer (${error instanceof Error ? error.message : String(error)}): run SELECT pg_drop_replication_slot('${name}'); and DROP PUBLICATION ${quoteIdent(name)};`];
  }
}

async function drop(executor: Admin, name: string): Promise<string[]> {
  const problems: string[] = [];
  const timeout = {};
  try {
    await executor.query('SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL', [name], timeout);
    // The ended reader lets the slot go a moment later.
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const [slot] = await executor.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [name], timeout);
      if (!slot) break;
      if (!slot.active) {
        await executor.query('SELECT pg_drop_replication_slot($1)', [name], timeout);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    problems.push(`The replication slot ${name} could not be dropped (${error instanceof Error ? error.message : String(error)}): run SELECT pg_drop_replication_slot('${name}'); or it keeps WAL on the server.`);
  }
  try {
    await executor.query(`DROP PUBLICATION IF EXISTS ${quoteIdent(name)}`, [], timeout);
  } catch (error) {
    problems.push(`The publication ${name} could not be dropped (${error instanceof Error ? error.message : String(error)}): run DROP PUBLICATION ${quoteIdent(name)};`);
  }
  return problems;
}

/** WAL bytes the slot keeps on the server: written since the last position Quarry confirmed (null: no slot). */
export async function slotLagBytes(executor: SqlExecutor, name: string, timeoutMs = 10_000): Promise<number | null> {
  const [row] = await executor.query<{ lag: unknown }>(
    'SELECT GREATEST(0, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn))::bigint AS lag FROM pg_replication_slots WHERE slot_name = $1',
    [name],
    { timeoutMs },
  );
  return row && row.lag !== null ? Number(row.lag) : null;
}

export interface StreamRun extends StreamedRun {
  clientConfig: ClientConfig;
  /** Slot and publication name (streamName). */
  name: string;
  /** The position stored after the last batch written (null: the slot's own, a new stream). */
  fromLsn: string | null;
  /** Stores the position after a batch is in the index; false when this process no longer holds the stream. */
  saveLsn(lsn: string): Promise<boolean>;
}

/** One connection's stream in this process: started by `start`, ended by `stop` (or by losing the stream). */
export class PgChangeStream extends BatchedChangeStream {
  private readonly service: LogicalReplicationService;
  private readonly bySource = new Map<string, StreamedTable>();
  private truncated = new Set<string>();
  private inTransaction = false;
  /** Commit end of the last transaction received, and the last position stored and confirmed. */
  private received: string | null = null;
  /** The last keepalive's position, and whether a change message arrived since (see the 'heartbeat' handler). */
  private lastKeepalive: string | null = null;
  private dataSinceKeepalive = false;
  private confirmed: string | null = null;
  /** Rows written and deleted so far (tests and logs). */
  readonly applied = { written: 0, deleted: 0, truncated: 0, reconciled: 0 };

  constructor(private readonly run: StreamRun) {
    super(run);
    for (const entry of run.tables) this.bySource.set(relationKey(entry.table.schema ?? 'public', entry.table.name), entry);
    this.confirmed = run.fromLsn;
    // No automatic status updates: the client's timer would confirm the last position RECEIVED, before its changes
    // are in the index. The server's keepalives are answered here, with the position stored.
    this.service = new LogicalReplicationService(run.clientConfig, { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } });
    this.service.on('data', (_lsn: string, message: Pgoutput.Message) => {
      this.dataSinceKeepalive = true;
      return this.batcher.run(() => this.onMessage(message));
    });
    this.service.on('heartbeat', (lsn: string, _time: number, shouldRespond: boolean) => {
      // Messages received before a keepalive may still be on their way to 'data' (the client queues them under flow
      // control) when it is announced. The position of the previous keepalive is safe once no message came between
      // it and this one: everything before it was handed to this stream, and `serial` runs it in order.
      const caughtUp = this.dataSinceKeepalive ? null : this.lastKeepalive;
      this.lastKeepalive = lsn;
      this.dataSinceKeepalive = false;
      void this.batcher.run(() => this.onHeartbeat(caughtUp, shouldRespond));
    });
    this.service.on('error', (error: Error) => this.batcher.end({ status: 'failed', error }));
  }

  /** Starts reading the slot from the stored position. */
  start(): void {
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [this.run.name] });
    this.service.subscribe(plugin, this.run.name, this.run.fromLsn ?? '0/0').then(
      () => this.batcher.end({ status: 'failed', error: new StreamError('STREAM_ENDED', 'The server ended the replication stream.') }),
      (error: unknown) => this.batcher.end({ status: 'failed', error }),
    );
  }

  protected async disconnect(): Promise<void> {
    await this.service.destroy();
  }

  private async onMessage(message: Pgoutput.Message): Promise<void> {
    switch (message.tag) {
      case 'begin':
        this.inTransaction = true;
        return;
      case 'relation':
        return this.onRelation(message);
      case 'insert':
      case 'update':
        return this.touch(message.relation, message.new);
      case 'delete':
        return this.touch(message.relation, message.key ?? message.old ?? {});
      case 'truncate':
        for (const relation of message.relations) {
          const entry = this.entryOf(relation);
          if (!entry) continue;
          this.batcher.drop(entry.src);
          this.truncated.add(entry.src);
        }
        return;
      case 'commit':
        this.inTransaction = false;
        if (message.commitEndLsn) this.received = message.commitEndLsn;
        return this.batcher.committed(this.truncated.size > 0);
      default:
        return;
    }
  }

  private async onHeartbeat(lsn: string | null, shouldRespond: boolean): Promise<void> {
    // Between transactions, every change before the server's position was received: once written, the position
    // may move past WAL of tables outside the publication, so that the slot does not keep it.
    if (!this.inTransaction && lsn && lsn !== '0/0' && (!this.received || lsnValue(lsn) > lsnValue(this.received))) this.received = lsn;
    if (shouldRespond || this.batcher.size === 0) await this.batcher.flush();
    // The server ends a reader that does not answer: the stored position again if nothing moved.
    if (shouldRespond && this.confirmed && !this.batcher.ended) await this.service.acknowledge(this.confirmed);
  }

  private entryOf(relation: Pick<Pgoutput.MessageRelation, 'schema' | 'name'>): StreamedTable | undefined {
    return this.bySource.get(relationKey(relation.schema, relation.name));
  }

  private async onRelation(relation: Pgoutput.MessageRelation): Promise<void> {
    const entry = this.entryOf(relation);
    if (!entry) return;
    const known = entry.table.columns.map((c) => c.name).sort().join('\u0000');
    const now = relation.columns.map((c) => c.name).sort().join('\u0000');
    if (known === now) return;
    // The table is re-read in full: its changes gathered before are in that read, and reading them by key now would
    // ask for the columns of before (a column dropped since fails the read). The other tables' are written first.
    this.batcher.drop(entry.src);
    await this.batcher.flush();
    const table = await this.run.reconcile(entry.src);
    this.applied.reconciled += 1;
    if (!table) {
      this.bySource.delete(relationKey(relation.schema, relation.name));
      return;
    }
    entry.table = table;
  }

  private touch(relation: Pgoutput.MessageRelation, values: Record<string, unknown>): void {
    const entry = this.entryOf(relation);
    if (!entry) return;
    // A key is named by its JSON, as the index names the row.
    this.batcher.add(entry.src, primaryKeyJson(entry.table, values), entry.table.primaryKey.map((c) => values[c]));
  }

  /** Writes a batch of gathered changes to the index, then stores and confirms the last received position. */
  protected async write(pending: PendingKeys): Promise<void> {
    const truncated = this.truncated;
    this.truncated = new Set();
    const touched = new Set<string>();
    const before = this.applied.written + this.applied.deleted;
    for (const src of truncated) {
      const gone: string[] = [];
      for await (const batch of this.run.space.scanSource(src)) for (const row of batch) gone.push(row.rid);
      for (let i = 0; i < gone.length; i += 1000) await this.run.space.deleteRows(gone.slice(i, i + 1000));
      this.applied.truncated += 1;
      this.applied.deleted += gone.length;
      if (gone.length > 0) touched.add(src);
    }
    const batch = await writeBatch(this.run, pending, (src) => [...this.bySource.values()].find((e) => e.src === src), keyJson);
    this.applied.written += batch.written;
    this.applied.deleted += batch.deleted;
    for (const src of batch.touched) touched.add(src);
    const rows = this.applied.written + this.applied.deleted - before;
    if (rows > 0) await this.run.afterBatch?.(rows);
    if (touched.size > 0) this.run.onApplied?.([...touched]);
    const position = this.received;
    if (!position || (this.confirmed && lsnValue(position) <= lsnValue(this.confirmed))) return;
    if (!(await this.run.saveLsn(position))) {
      this.batcher.end({ status: 'lost' });
      return;
    }
    this.confirmed = position;
    await this.service.acknowledge(position);
  }
}

/** A key's values named as `touch` names them: the primary key's JSON. */
function keyJson(table: TableSchema, key: unknown[]): string {
  return primaryKeyJson(table, Object.fromEntries(table.primaryKey.map((c, n) => [c, key[n]])));
}

function relationKey(schema: string, name: string): string {
  return `${schema}\u0000${name}`;
}

