/**
 * Driver errors turned into Quarry's stable connector codes (openapi.yaml, "Error codes": 400 HOST_NOT_ALLOWED and
 * SQLITE_PATH_NOT_ALLOWED, 422/502 DATABASE_*). Messages are fixed sentences chosen here, never the driver's text:
 * a raw driver message can carry host names, user names, file paths or SQL. The original error stays on `cause`
 * for server-side logs only.
 */
import type { components } from '../../generated/openapi.js';
import { VALUE_TOO_LARGE } from './bounded-values.js';
import type { Engine } from './types.js';

type ErrorCode = components['schemas']['ErrorCode'];

export type ConnectorErrorCode =
  | 'DATABASE_UNREACHABLE'
  | 'DATABASE_TIMEOUT'
  | 'DATABASE_AUTH_FAILED'
  | 'DATABASE_NOT_FOUND'
  | 'DATABASE_TLS_ERROR'
  | 'DATABASE_ERROR'
  | 'HOST_NOT_ALLOWED'
  | 'SQLITE_PATH_NOT_ALLOWED';

// Compile-time proof that every connector code is one the contract knows.
const contractCodes: Record<ConnectorErrorCode, ErrorCode> = {
  DATABASE_UNREACHABLE: 'DATABASE_UNREACHABLE',
  DATABASE_TIMEOUT: 'DATABASE_TIMEOUT',
  DATABASE_AUTH_FAILED: 'DATABASE_AUTH_FAILED',
  DATABASE_NOT_FOUND: 'DATABASE_NOT_FOUND',
  DATABASE_TLS_ERROR: 'DATABASE_TLS_ERROR',
  DATABASE_ERROR: 'DATABASE_ERROR',
  HOST_NOT_ALLOWED: 'HOST_NOT_ALLOWED',
  SQLITE_PATH_NOT_ALLOWED: 'SQLITE_PATH_NOT_ALLOWED',
};
export const CONNECTOR_ERROR_CODES = Object.keys(contractCodes) as ConnectorErrorCode[];

/** Details safe to return to the caller: no addresses, no driver messages, no SQL. */
export interface ConnectorErrorDetails {
  engine?: Engine;
  /** The driver's short code (SQLSTATE, errno name), when it is a plain code. */
  driverCode?: string;
  timeoutMs?: number;
  /** Why a policy refused: e.g. `link-local`, `metadata`, `private`, `escapes`, `not_read_only`. */
  reason?: string;
}

export class ConnectorError extends Error {
  override readonly name = 'ConnectorError';

  constructor(
    readonly code: ConnectorErrorCode,
    message: string,
    readonly details: ConnectorErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The `{ code, message }` pair of the contract's NullableSafeError. */
  toSafeError(): { code: ConnectorErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function isConnectorError(err: unknown): err is ConnectorError {
  return err instanceof ConnectorError;
}

/** True when a statement failed because a value was larger than the engine may build for Quarry. */
export function isValueTooLarge(err: unknown): boolean {
  return err instanceof ConnectorError && err.details.reason === VALUE_TOO_LARGE;
}

/** True for the codes that mean "refused by Quarry's own policy" (400), as opposed to a database failure (422/502). */
export function isPolicyError(code: string): boolean {
  return code === 'HOST_NOT_ALLOWED' || code === 'SQLITE_PATH_NOT_ALLOWED';
}

/** "3 seconds", "1.5 seconds", "300 ms": the wording of the contract's DATABASE_TIMEOUT example. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

export interface ErrorContext {
  engine: Engine;
  /** The limit that applied, for the timeout message. */
  timeoutMs?: number;
}

interface Classified {
  code: ConnectorErrorCode;
  message: string;
  reason?: string;
}

const MESSAGES = {
  unreachable: 'The database server could not be reached.',
  refused: 'The database server refused the connection.',
  dnsFailed: 'The database host name could not be resolved.',
  connectionLost: 'The connection to the database server was lost.',
  busy: 'The database server is not accepting new connections right now.',
  auth: 'The database rejected the user name or password.',
  notFound: 'The database does not exist on the server.',
  sqliteMissing: 'The SQLite file does not exist or cannot be opened.',
  tlsUnsupported: 'The database server does not support TLS connections.',
  tlsRequired: 'The database server requires TLS: turn on ssl for this connection.',
  tlsCertificate: "The database server's TLS certificate could not be verified.",
  tls: 'A TLS connection to the database could not be established.',
  readOnly: 'Quarry runs read-only statements only; the database refused a write.',
  sqliteNotADatabase: 'The file is not an SQLite database.',
  locked: 'The database is locked by another process.',
  tooLarge: 'A value in the database is larger than Quarry reads.',
  generic: 'The database could not run the query.',
} as const;

const NETWORK_UNREACHABLE = new Set([
  'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EADDRNOTAVAIL', 'ECONNABORTED',
]);
const NETWORK_LOST = new Set(['ECONNRESET', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ERR_SOCKET_CLOSED']);
const DNS_FAILED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const TIMEOUTS = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT', 'SQLITE_INTERRUPT']);
const TLS_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID',
  'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH', 'INVALID_CA',
]);

/** MySQL/MariaDB server error numbers (mysql2 leaves `code` unset for some, e.g. MariaDB's 1969). */
const MYSQL_ERRNO: Record<number, Classified> = {
  1044: { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth }, // ER_DBACCESS_DENIED_ERROR
  1045: { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth }, // ER_ACCESS_DENIED_ERROR
  1130: { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth }, // ER_HOST_NOT_PRIVILEGED
  1251: { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth }, // ER_NOT_SUPPORTED_AUTH_MODE
  1698: { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth }, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
  1049: { code: 'DATABASE_NOT_FOUND', message: MESSAGES.notFound }, // ER_BAD_DB_ERROR
  1040: { code: 'DATABASE_UNREACHABLE', message: MESSAGES.busy }, // ER_CON_COUNT_ERROR
  1129: { code: 'DATABASE_UNREACHABLE', message: MESSAGES.busy }, // ER_HOST_IS_BLOCKED
  1203: { code: 'DATABASE_UNREACHABLE', message: MESSAGES.busy }, // ER_TOO_MANY_USER_CONNECTIONS
  1969: { code: 'DATABASE_TIMEOUT', message: '' }, // MariaDB ER_STATEMENT_TIMEOUT (max_statement_time)
  3024: { code: 'DATABASE_TIMEOUT', message: '' }, // MySQL ER_QUERY_TIMEOUT (max_execution_time)
  1317: { code: 'DATABASE_TIMEOUT', message: '' }, // ER_QUERY_INTERRUPTED
  1792: { code: 'DATABASE_ERROR', message: MESSAGES.readOnly, reason: 'not_read_only' }, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  1290: { code: 'DATABASE_ERROR', message: MESSAGES.readOnly, reason: 'not_read_only' }, // ER_OPTION_PREVENTS_STATEMENT (read_only)
  3159: { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tlsRequired }, // ER_SECURE_TRANSPORT_REQUIRED
};

/** PostgreSQL SQLSTATE codes. */
function classifyPostgresState(state: string): Classified | null {
  if (state === '28P01' || state === '28000') return { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth };
  if (state === '3D000') return { code: 'DATABASE_NOT_FOUND', message: MESSAGES.notFound };
  if (state === '57014') return { code: 'DATABASE_TIMEOUT', message: '' }; // query_canceled (statement_timeout)
  if (state === '25006') return { code: 'DATABASE_ERROR', message: MESSAGES.readOnly, reason: 'not_read_only' };
  if (state === '53300' || state === '57P03') return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.busy };
  if (state.startsWith('08') || state === '57P01' || state === '57P02') {
    return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.connectionLost };
  }
  return null;
}

function classifySqlite(code: string): Classified | null {
  switch (code) {
    case 'SQLITE_CANTOPEN': return { code: 'DATABASE_NOT_FOUND', message: MESSAGES.sqliteMissing };
    case 'SQLITE_READONLY': return { code: 'DATABASE_ERROR', message: MESSAGES.readOnly, reason: 'not_read_only' };
    case 'SQLITE_AUTH': return { code: 'DATABASE_AUTH_FAILED', message: MESSAGES.auth };
    case 'SQLITE_NOTADB': return { code: 'DATABASE_ERROR', message: MESSAGES.sqliteNotADatabase };
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED': return { code: 'DATABASE_ERROR', message: MESSAGES.locked };
    case 'SQLITE_TOOBIG': return { code: 'DATABASE_ERROR', message: MESSAGES.tooLarge, reason: VALUE_TOO_LARGE };
    default: return null;
  }
}

/** Messages pg and pg-pool raise without a code. */
function classifyByMessage(message: string): Classified | null {
  if (/timeout exceeded when trying to connect|connection timeout|Query read timeout/i.test(message)) {
    return { code: 'DATABASE_TIMEOUT', message: '' };
  }
  if (/does not support SSL/i.test(message)) return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tlsUnsupported };
  if (/establishing an SSL connection|SSL routines|certificate/i.test(message)) {
    return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tls };
  }
  if (/Connection terminated|server closed the connection/i.test(message)) {
    return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.connectionLost };
  }
  return null;
}

function classifyCode(code: string, errno: number | undefined, engine: Engine, message: string): Classified | null {
  if (code === 'ECONNREFUSED') return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.refused };
  if (NETWORK_UNREACHABLE.has(code)) return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.unreachable };
  if (NETWORK_LOST.has(code)) return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.connectionLost };
  if (DNS_FAILED.has(code)) return { code: 'DATABASE_UNREACHABLE', message: MESSAGES.dnsFailed };
  if (TIMEOUTS.has(code)) return { code: 'DATABASE_TIMEOUT', message: '' };
  if (code === 'HANDSHAKE_NO_SSL_SUPPORT') return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tlsUnsupported };
  if (TLS_CERT_CODES.has(code)) return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tlsCertificate };
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.startsWith('HANDSHAKE_SSL')) {
    return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tls };
  }
  if (code.startsWith('SQLITE_')) return classifySqlite(code);
  if (engine === 'mysql' && errno !== undefined && MYSQL_ERRNO[errno]) return MYSQL_ERRNO[errno];
  if (engine === 'postgres' && /^[0-9A-Z]{5}$/.test(code)) {
    // pg_hba.conf allows this client only over TLS ("no pg_hba.conf entry ... SSL off").
    if (code === '28000' && /SSL off/i.test(message)) return { code: 'DATABASE_TLS_ERROR', message: MESSAGES.tlsRequired };
    return classifyPostgresState(code);
  }
  return null;
}

interface DriverErrorLike {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  errors?: unknown;
}

function asDriverError(err: unknown): DriverErrorLike {
  return typeof err === 'object' && err !== null ? (err as DriverErrorLike) : {};
}

function classify(err: unknown, engine: Engine, depth = 0): Classified | null {
  const e = asDriverError(err);
  const code = typeof e.code === 'string' ? e.code : '';
  const errno = typeof e.errno === 'number' ? e.errno : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  const byCode = code || errno !== undefined ? classifyCode(code, errno, engine, message) : null;
  if (byCode) return byCode;
  // Node's happy-eyeballs connect raises an AggregateError whose members carry the codes.
  if (Array.isArray(e.errors) && depth < 2) {
    for (const inner of e.errors) {
      const found = classify(inner, engine, depth + 1);
      if (found) return found;
    }
  }
  return message ? classifyByMessage(message) : null;
}

function safeDriverCode(err: unknown): string | undefined {
  const e = asDriverError(err);
  const code = typeof e.code === 'string' ? e.code : typeof e.errno === 'number' ? String(e.errno) : '';
  return /^[A-Za-z0-9_]{1,48}$/.test(code) ? code : undefined;
}

/** A query on an executor that was closed (connection updated or deleted meanwhile). */
export function poolClosedError(engine: Engine): ConnectorError {
  return new ConnectorError('DATABASE_UNREACHABLE', 'The connection to this database was closed.', { engine, reason: 'closed' });
}

export function timeoutError(context: ErrorContext, cause?: unknown): ConnectorError {
  const message = context.timeoutMs
    ? `The database did not answer within ${formatDuration(context.timeoutMs)}.`
    : 'The database did not answer in time.';
  const details: ConnectorErrorDetails = { engine: context.engine };
  if (context.timeoutMs) details.timeoutMs = context.timeoutMs;
  const driverCode = safeDriverCode(cause);
  if (driverCode) details.driverCode = driverCode;
  return new ConnectorError('DATABASE_TIMEOUT', message, details, { cause });
}

/**
 * Any error thrown by pg, mysql2, sqlite3 or the network, as a ConnectorError with a stable code and a safe message.
 * A ConnectorError passes through unchanged.
 */
export function toConnectorError(err: unknown, context: ErrorContext): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const classified = classify(err, context.engine) ?? { code: 'DATABASE_ERROR', message: MESSAGES.generic };
  if (classified.code === 'DATABASE_TIMEOUT') return timeoutError(context, err);
  const details: ConnectorErrorDetails = { engine: context.engine };
  const driverCode = safeDriverCode(err);
  if (driverCode) details.driverCode = driverCode;
  if (classified.reason) details.reason = classified.reason;
  return new ConnectorError(classified.code, classified.message, details, { cause: err });
}
