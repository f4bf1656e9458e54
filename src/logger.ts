import pino, { type LoggerOptions } from 'pino';

/** pino options shared by the server and the CLI; credentials are redacted wherever they might appear. */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.password', '*.client_secret', '*.token', 'password', 'token', 'client_secret'],
      censor: '[redacted]',
    },
  };
}
