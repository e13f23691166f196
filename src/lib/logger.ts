import cluster from 'node:cluster';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Secrets never reach a log line: the paths below are censored wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    // A worker of several (WORKERS) says which one it is.
    base: { service: 'quarry', ...(cluster.isWorker && { pid: process.pid }) },
    redact: {
      paths: ['req.headers.authorization', 'password', '*.password', '*.newPassword', '*.currentPassword', '*.secretKey', '*.refreshToken',
        // The index's object store credentials (config.index.storageOptions), wherever a config or its part is logged.
        'storageOptions', '*.storageOptions', '*.*.storageOptions'],
      censor: '[redacted]',
    },
  }, destination);
}

/**
 * The per-request access log: the same level, destination and base fields, without redaction. Its lines have fixed
 * fields (request id, method, path, operation, status, duration) where no secret can sit under a censored name, and
 * the wildcard redaction paths would make the one line every request writes several times dearer.
 */
export function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: [] } }) as Logger;
}
