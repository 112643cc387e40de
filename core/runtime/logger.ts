import pino, { type Logger } from 'pino';

export type { Logger };

/** Keys whose values never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers["x-service-api-key"]',
  'headers.authorization',
  'headers["x-service-api-key"]',
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
];

/** One structured JSON logger per process; children per request (`requestId`) and per job (`jobId`). */
export function createLogger(name: string, level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      base: { svc: name },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
