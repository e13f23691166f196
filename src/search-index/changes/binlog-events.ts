/**
 * The pure parts of stream mode on MySQL/MariaDB: where in the binary log a stream stands, and what a binlog event
 * means for the index (the primary keys it changed, or a statement that changes a table's shape or empties it).
 */
import type { TableSchema } from '../../connectors/index.js';
import { keyValue } from '../documents.js';

/**
 * A place in the server's binary log: the file and the offset after the last transaction written to the index, and
 * the GTID of that transaction when the server gives one (MariaDB: `domain-server-sequence`, always on; MySQL:
 * `uuid:number` when gtid_mode is ON), shown in the index endpoint.
 */
export interface BinlogPosition {
  file: string;
  position: number;
  gtid: string | null;
  /**
   * Every transaction the server had executed up to here, in its own form (MariaDB's GTID position `0-1-42,1-2-7`,
   * MySQL's GTID set `uuid:1-42`), when known. A file and offset name a place on one server only; this names it on
   * every server of the replication topology, so a stream resumes from it (the server finds the place itself) and
   * follows a failover to a replica that has become the primary.
   */
  gtidSet?: string;
  /** The server answered that it no longer has this position: the next start reconciles (as for a purged file). */
  gone?: boolean;
}

/** The position as stored in the table's change cursor. */
export function binlogCursor(position: BinlogPosition): string {
  return JSON.stringify({
    file: position.file, position: position.position, gtid: position.gtid,
    ...(position.gtidSet ? { gtidSet: position.gtidSet } : {}), ...(position.gone ? { gone: true } : {}),
  });
}

/** A stored change cursor read back as a binlog position (null: none stored, or not a binlog position). */
export function parseBinlogCursor(cursor: string | null | undefined): BinlogPosition | null {
  if (!cursor) return null;
  let value: unknown;
  try {
    value = JSON.parse(cursor);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const { file, position, gtid, gtidSet, gone } = value as Record<string, unknown>;
  if (typeof file !== 'string' || file === '' || typeof position !== 'number' || !Number.isInteger(position) || position < 4) return null;
  return {
    file, position, gtid: typeof gtid === 'string' && gtid !== '' ? gtid : null,
    ...(typeof gtidSet === 'string' && gtidSet !== '' ? { gtidSet } : {}), ...(gone === true ? { gone: true } : {}),
  };
}

/**
 * Bytes of binary log the server wrote after `position` (the stream's lag in bytes, as a PostgreSQL slot's retained
 * WAL): the rest of its file and every later file, from `SHOW BINARY LOGS`. Null when the server no longer lists the
 * file (purged: the stream re-reads the tables) or the position is marked gone.
 */
export function binlogLagBytes(logs: Array<{ Log_name: string; File_size: unknown }>, position: Pick<BinlogPosition, 'file' | 'position' | 'gone'>): number | null {
  if (position.gone) return null;
  const at = logs.findIndex((log) => log.Log_name === position.file);
  if (at < 0) return null;
  const rest = Math.max(0, Number(logs[at]!.File_size) - position.position);
  return logs.slice(at + 1).reduce((sum, log) => sum + Number(log.File_size), rest);
}

/** How the index endpoint shows it: `mysql-bin.000003:1547`, with ` (GTID 0-1-42)` when known. */
export function formatBinlogPosition(position: BinlogPosition): string {
  return `${position.file}:${position.position}${position.gtid ? ` (GTID ${position.gtid})` : ''}`;
}

/**
 * Orders two positions of one server: log files are numbered in order (`name.000001`, `name.000002`, ...), offsets
 * grow inside a file.
 */
export function compareBinlogPositions(a: Pick<BinlogPosition, 'file' | 'position'>, b: Pick<BinlogPosition, 'file' | 'position'>): number {
  if (a.file !== b.file) {
    const number = (file: string) => Number(/\.(\d+)$/.exec(file)?.[1] ?? Number.NaN);
    const [x, y] = [number(a.file), number(b.file)];
    if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x < y ? -1 : 1;
    return a.file < b.file ? -1 : 1;
  }
  return a.position - b.position;
}

/** A primary key's values as the server's SELECT returns them, so that the row a change names is found by them. */
export function binlogKey(table: Pick<TableSchema, 'primaryKey'>, image: Record<string, unknown>): unknown[] | null {
  const key: unknown[] = [];
  for (const column of table.primaryKey) {
    let value = image[column];
    if (value === undefined) return null;
    // The reader gives a 64-bit integer as a bigint or a digit string; the driver gives it as a number when exact.
    if (typeof value === 'bigint') value = Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    key.push(value);
  }
  return key;
}

/** Compares keys whatever form a value came in (`5` and `'5'` name the same row). */
export function looseKey(values: unknown[]): string {
  return JSON.stringify(values.map((value) => String(keyValue(value))));
}

export type RowsEventName = 'writerows' | 'updaterows' | 'deleterows';

/**
 * The row images a rows event carries whose key may have changed in the table: an insert's new rows, a delete's old
 * ones, and for an update both (an update may change the primary key: the old key is gone, the new one written).
 */
export function changedImages(name: RowsEventName, rows: unknown[]): Array<Record<string, unknown>> {
  if (name !== 'updaterows') return rows as Array<Record<string, unknown>>;
  return (rows as Array<{ before: Record<string, unknown>; after: Record<string, unknown> }>).flatMap((row) => [row.before, row.after]);
}

/** Statements that only frame a transaction's rows. */
const FRAMING = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+TO|XA\s+|SET\s|FLUSH\s|ANALYZE\s|OPTIMIZE\s|CREATE\s+(OR\s+REPLACE\s+)?(USER|ROLE|DATABASE|SCHEMA)\b|GRANT\s|REVOKE\s|DROP\s+(USER|ROLE)\b)/i;
const identifierChars = /[A-Za-z0-9_$]/;

/**
 * The streamed tables a statement of the log names, when it is one that can change them outside row events: a
 * TRUNCATE (no row is logged), an ALTER (a column added or dropped changes every row's fields), a DROP or RENAME.
 * Matched by name, in the statement's default schema or qualified by `schema`: a statement that merely mentions a
 * name costs a reconcile, never a lost change.
 */
export function statementTargets(statement: string, defaultSchema: string, schema: string, names: string[]): string[] {
  if (FRAMING.test(statement)) return [];
  const text = statement.replace(/\/\*[\s\S]*?\*\//g, ' ');
  const found: string[] = [];
  for (const name of names) {
    const lowered = name.toLowerCase();
    let index = text.toLowerCase().indexOf(lowered);
    while (index >= 0) {
      const before = text[index - 1] ?? ' ';
      const after = text[index + name.length] ?? ' ';
      // A whole identifier, bare or quoted: `kettles` is not `kettles_old`.
      if (!identifierChars.test(before) && !identifierChars.test(after)) {
        // `other.name` names a table of another schema; `name` alone one of the statement's default schema.
        const qualifier = /`?([A-Za-z0-9_$]+)`?\s*\.\s*`?$/.exec(text.slice(0, index));
        const inSchema = qualifier ? qualifier[1]!.toLowerCase() === schema.toLowerCase() : defaultSchema.toLowerCase() === schema.toLowerCase();
        if (inSchema) {
          found.push(name);
          break;
        }
      }
      index = text.toLowerCase().indexOf(lowered, index + 1);
    }
  }
  return found;
}

/** What the index endpoint shows of a MySQL/MariaDB stream's stored position (null: none stored yet). */
export function binlogPositionView(cursor: string | null | undefined): { file: string; position: number; gtid: string | null } | null {
  const stored = parseBinlogCursor(cursor);
  return stored && { file: stored.file, position: stored.position, gtid: stored.gtid };
}
