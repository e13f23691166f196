import { describe, expect, it } from 'vitest';
import {
  ConnectorError,
  formatDuration,
  isPolicyError,
  toConnectorError,
} from '../../../src/connectors/errors.js';
import type { Engine } from '../../../src/connectors/types.js';

function driverError(message: string, props: Record<string, unknown>): Error {
  return Object.assign(new Error(message), props);
}

function mapped(err: unknown, engine: Engine = 'postgres', timeoutMs?: number) {
  return toConnectorError(err, { engine, ...(timeoutMs ? { timeoutMs } : {}) });
}

describe('toConnectorError', () => {
  it.each([
    ['ECONNREFUSED', 'DATABASE_UNREACHABLE'],
    ['EHOSTUNREACH', 'DATABASE_UNREACHABLE'],
    ['ENETUNREACH', 'DATABASE_UNREACHABLE'],
    ['ENOTFOUND', 'DATABASE_UNREACHABLE'],
    ['EAI_AGAIN', 'DATABASE_UNREACHABLE'],
    ['ECONNRESET', 'DATABASE_UNREACHABLE'],
    ['ETIMEDOUT', 'DATABASE_TIMEOUT'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'DATABASE_TLS_ERROR'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'DATABASE_TLS_ERROR'],
    ['EPROTO', 'DATABASE_TLS_ERROR'],
  ])('when a network error has code %s, then the code is %s', (code, expected) => {
    expect(mapped(driverError(`connect ${code} 10.1.2.3:5432`, { code })).code).toBe(expected);
  });

  it.each([
    ['28P01', 'DATABASE_AUTH_FAILED'],
    ['28000', 'DATABASE_AUTH_FAILED'],
    ['3D000', 'DATABASE_NOT_FOUND'],
    ['57014', 'DATABASE_TIMEOUT'],
    ['53300', 'DATABASE_UNREACHABLE'],
    ['57P03', 'DATABASE_UNREACHABLE'],
    ['08006', 'DATABASE_UNREACHABLE'],
    ['25006', 'DATABASE_ERROR'],
    ['42601', 'DATABASE_ERROR'],
  ])('when PostgreSQL answers SQLSTATE %s, then the code is %s', (code, expected) => {
    expect(mapped(driverError('password authentication failed for user "alice"', { code, severity: 'FATAL' })).code).toBe(expected);
  });

  it.each([
    [1045, 'ER_ACCESS_DENIED_ERROR', 'DATABASE_AUTH_FAILED'],
    [1044, 'ER_DBACCESS_DENIED_ERROR', 'DATABASE_AUTH_FAILED'],
    [1698, 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'DATABASE_AUTH_FAILED'],
    [1049, 'ER_BAD_DB_ERROR', 'DATABASE_NOT_FOUND'],
    [1969, undefined, 'DATABASE_TIMEOUT'],
    [3024, 'ER_QUERY_TIMEOUT', 'DATABASE_TIMEOUT'],
    [1040, 'ER_CON_COUNT_ERROR', 'DATABASE_UNREACHABLE'],
    [1792, 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION', 'DATABASE_ERROR'],
    [1064, 'ER_PARSE_ERROR', 'DATABASE_ERROR'],
  ])('when MySQL answers errno %s (%s), then the code is %s', (errno, code, expected) => {
    expect(mapped(driverError("Access denied for user 'root'@'10.0.0.1'", { errno, code, sqlState: '28000' }), 'mysql').code).toBe(expected);
  });

  it.each([
    ['HANDSHAKE_NO_SSL_SUPPORT', 'DATABASE_TLS_ERROR'],
    ['PROTOCOL_CONNECTION_LOST', 'DATABASE_UNREACHABLE'],
    ['PROTOCOL_SEQUENCE_TIMEOUT', 'DATABASE_TIMEOUT'],
  ])('when mysql2 raises %s, then the code is %s', (code, expected) => {
    expect(mapped(driverError('x', { code }), 'mysql').code).toBe(expected);
  });

  it.each([
    ['SQLITE_CANTOPEN', 'DATABASE_NOT_FOUND'],
    ['SQLITE_INTERRUPT', 'DATABASE_TIMEOUT'],
    ['SQLITE_READONLY', 'DATABASE_ERROR'],
    ['SQLITE_NOTADB', 'DATABASE_ERROR'],
    ['SQLITE_ERROR', 'DATABASE_ERROR'],
  ])('when sqlite3 raises %s, then the code is %s', (code, expected) => {
    expect(mapped(driverError(`${code}: unable to open database file /srv/data/x.db`, { code, errno: 14 }), 'sqlite').code).toBe(expected);
  });

  it.each([
    ['timeout exceeded when trying to connect', 'DATABASE_TIMEOUT'],
    ['Connection terminated due to connection timeout', 'DATABASE_TIMEOUT'],
    ['Connection terminated unexpectedly', 'DATABASE_UNREACHABLE'],
    ['The server does not support SSL connections', 'DATABASE_TLS_ERROR'],
    ['something nobody anticipated', 'DATABASE_ERROR'],
  ])('when pg raises "%s" without a code, then the code is %s', (message, expected) => {
    expect(mapped(new Error(message)).code).toBe(expected);
  });

  it('when the server accepts this client only over TLS, then DATABASE_TLS_ERROR says to turn ssl on', () => {
    const pgErr = driverError('no pg_hba.conf entry for host "10.0.0.1", user "u", database "d", SSL off', { code: '28000' });
    expect(mapped(pgErr).code).toBe('DATABASE_TLS_ERROR');
    expect(mapped(driverError('Connections using insecure transport are prohibited', { errno: 3159 }), 'mysql')).toMatchObject({
      code: 'DATABASE_TLS_ERROR',
      message: 'The database server requires TLS: turn on ssl for this connection.',
    });
  });

  it('when Node raises an AggregateError for several addresses, then its members decide the code', () => {
    const err = new AggregateError([driverError('connect ECONNREFUSED ::1:5432', { code: 'ECONNREFUSED' })], '');
    expect(mapped(err).code).toBe('DATABASE_UNREACHABLE');
  });

  it('when any driver error is mapped, then the message is a fixed sentence without driver internals', () => {
    const raw = driverError('password authentication failed for user "alice" at 10.9.8.7 /var/lib/x', { code: '28P01' });
    const err = mapped(raw);
    expect(err.message).toBe('The database rejected the user name or password.');
    expect(JSON.stringify(err.details)).not.toMatch(/alice|10\.9\.8\.7|var/);
    expect(err.cause).toBe(raw);
  });

  it('when a driver code is not a plain code, then it is left out of the details', () => {
    const err = mapped(driverError('x', { code: 'weird code with "quotes" and spaces' }));
    expect(err.details.driverCode).toBeUndefined();
  });

  it('when a timeout limit is known, then the message states it like the contract example', () => {
    expect(mapped(driverError('canceling statement', { code: '57014' }), 'postgres', 3000).message).toBe(
      'The database did not answer within 3 seconds.',
    );
    expect(mapped(driverError('x', { code: 'ETIMEDOUT' }), 'mysql', 300).details).toMatchObject({ timeoutMs: 300, engine: 'mysql' });
  });

  it('when the error is already a ConnectorError, then it passes through unchanged', () => {
    const original = new ConnectorError('HOST_NOT_ALLOWED', 'no');
    expect(mapped(original)).toBe(original);
  });

  it('when a non-error value is thrown, then it maps to DATABASE_ERROR', () => {
    expect(mapped('boom').code).toBe('DATABASE_ERROR');
    expect(mapped(null).code).toBe('DATABASE_ERROR');
  });
});

describe('helpers', () => {
  it('when durations are formatted, then they read like the contract', () => {
    expect(formatDuration(3000)).toBe('3 seconds');
    expect(formatDuration(1000)).toBe('1 second');
    expect(formatDuration(1500)).toBe('1.5 seconds');
    expect(formatDuration(300)).toBe('300 ms');
  });

  it('when a code is a policy refusal, then isPolicyError says so', () => {
    expect(isPolicyError('HOST_NOT_ALLOWED')).toBe(true);
    expect(isPolicyError('SQLITE_PATH_NOT_ALLOWED')).toBe(true);
    expect(isPolicyError('DATABASE_UNREACHABLE')).toBe(false);
  });

  it('when toSafeError is called, then only code and message are returned', () => {
    expect(new ConnectorError('DATABASE_ERROR', 'm', { engine: 'mysql' }).toSafeError()).toEqual({ code: 'DATABASE_ERROR', message: 'm' });
  });
});
