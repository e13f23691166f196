/**
 * What a failure of Quarry's own store means, so callers can act on it without knowing
 * Sequelize: `unavailable` is the store being down, unreachable, out of connections or busy (try again later: a
 * request answers 503, a batched write is kept and retried); `rejected` is a row the store can never take (a
 * constraint or data violation: retrying it would block every later write); `other` is anything else (a bug).
 */
import {
  ConnectionError, DatabaseError, ExclusionConstraintError, ForeignKeyConstraintError, TimeoutError, ValidationError,
} from 'sequelize';

export type StoreFailure = 'unavailable' | 'rejected' | 'other';

/** PostgreSQL SQLSTATE classes: 08 connection, 53 resources (too many clients), 57 operator (shutdown), 40 rollback. */
const UNAVAILABLE_SQLSTATE = /^(08|53|57|40)/;
/** 22 data exception, 23 integrity constraint. */
const REJECTED_SQLSTATE = /^(22|23)/;
const UNAVAILABLE_SQLITE = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL']);
const REJECTED_SQLITE = new Set(['SQLITE_CONSTRAINT', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_RANGE']);
const UNAVAILABLE_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What pg says when the server goes away mid-query (no code of its own). */
const LOST_CONNECTION = /Connection terminated|connection.*(closed|ended)|Client has encountered a connection error/i;

export function classifyStoreFailure(error: unknown): StoreFailure {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return 'unavailable';
  if (error instanceof ValidationError || error instanceof ForeignKeyConstraintError || error instanceof ExclusionConstraintError) return 'rejected';
  if (!(error instanceof DatabaseError)) return 'other';
  const original = (error.original ?? error.parent ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof original.code === 'string' ? original.code : '';
  if (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_SQLITE.has(code) || UNAVAILABLE_NETWORK.has(code)) return 'unavailable';
  if (REJECTED_SQLSTATE.test(code) || REJECTED_SQLITE.has(code)) return 'rejected';
  if (LOST_CONNECTION.test(String(original.message ?? error.message))) return 'unavailable';
  return 'other';
}

export const isStoreUnavailable = (error: unknown): boolean => classifyStoreFailure(error) === 'unavailable';
export const isRowRejected = (error: unknown): boolean => classifyStoreFailure(error) === 'rejected';
