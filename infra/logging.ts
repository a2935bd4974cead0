import pino, { type Logger } from 'pino';

export type { Logger };

/** Tokens and secrets never reach the logs: these paths are redacted wherever they appear. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.clientSecret',
];

export function createLogger(level: string, name = 'records-platform'): Logger {
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}
