import { describe, expect, it } from 'vitest';
import { accessLogger, createLogger } from '../../../src/lib/logger.js';

function capture(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('createLogger', () => {
  it('when a line carries a secret under a censored name, at any depth the paths name, then it is redacted', () => {
    const { logger, lines } = capture();
    logger.info({ password: 'p', body: { secretKey: 'quarry_sk_test_x', refreshToken: 'r' }, req: { headers: { authorization: 'Bearer t' } } }, 'm');
    expect(lines[0]).toMatchObject({ service: 'quarry', password: '[redacted]', body: { secretKey: '[redacted]', refreshToken: '[redacted]' }, req: { headers: { authorization: '[redacted]' } } });
  });

  it("when the configuration or its index part is logged, then the object store's storage options (credentials) are redacted", () => {
    const { logger, lines } = capture();
    const index = { uri: 's3://bucket/q', storageOptions: { aws_access_key_id: 'AKID', aws_secret_access_key: 'hunter2' } };
    logger.info({ config: { index } }, 'config');
    logger.info({ index }, 'index');
    logger.info(index, 'options');
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    expect(lines.map((line) => line.msg)).toEqual(['config', 'index', 'options']);
    expect(lines[0]).toMatchObject({ config: { index: { uri: 's3://bucket/q', storageOptions: '[redacted]' } } });
  });
});

describe('accessLogger', () => {
  it('when the access line is written, then it has the base fields and level, and the main logger still redacts', () => {
    const { logger, lines } = capture();
    const access = accessLogger(logger);
    access.info({ requestId: 'r1', method: 'GET', path: '/health', operationId: 'getHealth', status: 200, durationMs: 1 }, 'request');
    logger.info({ password: 'p' }, 'after');
    expect(lines[0]).toMatchObject({ level: 30, service: 'quarry', requestId: 'r1', method: 'GET', path: '/health', status: 200, msg: 'request' });
    expect(lines[1]).toMatchObject({ password: '[redacted]', msg: 'after' });
  });

  it('when the level is above info, then no access line is written', () => {
    const { logger, lines } = capture('warn');
    accessLogger(logger).info({ requestId: 'r1' }, 'request');
    expect(lines).toEqual([]);
  });
});
