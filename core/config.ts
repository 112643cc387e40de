import path from 'node:path';
import { z } from 'zod';

/**
 * The service configuration. This module is the only reader of `process.env`: every other module receives a
 * `Config`. Errors name the variable, never its value, so a bad secret never reaches a log.
 */
const bool = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const s = v.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const configSchema = z.object({
  NODE_ENV: z.string().optional().default('development'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).optional().default('info'),
  PORT: int(8080, 0, 65535),
  HOST: z.string().optional().default('127.0.0.1'),
  DATA_DIR: z.string().optional().default('.data'),
  SERVICE_API_KEY: optionalString,
  ALLOW_LOCALHOST_NO_AUTH: bool(false),
  ALLOW_DOC_WHITELIST: optionalString,
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().optional().default('default'),
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TLS: bool(false),
  TEMPORAL_DEV_PORT: int(7233, 1, 65535),
  TEMPORAL_UI_PORT: int(8233, 1, 65535),
  TASK_QUEUE_PREFIX: z.string().optional().default('docproc'),
  MEDIA_CONCURRENCY: int(0, 0, 256),
  IO_CONCURRENCY: int(50, 1, 1000),
  STORAGE: z.enum(['local', 's3']).optional().default('local'),
  S3_ENDPOINT: optionalString,
  S3_BUCKET: z.string().optional().default('docproc'),
  S3_ACCESS_KEY: optionalString,
  S3_SECRET_KEY: optionalString,
  S3_REGION: z.string().optional().default('us-east-1'),
  MAX_UPLOAD_MB: int(500, 1, 1_000_000),
  MAX_JSON_MB: int(16, 1, 1024),
  MAX_BATCH_JOBS: int(1000, 1, 100_000),
  BATCH_WINDOW: int(100, 1, 10_000),
  SYNC_WAIT_MS: int(120_000, 1000, 3_600_000),
  ALLOW_PRIVATE_URLS: bool(false),
  ALLOW_HTTP_CALLBACKS: bool(false),
  WEBHOOK_SIGNING_SECRET: optionalString,
  /** Multiplies webhook retry delays; 1 keeps the contract's schedule (8 attempts over about an hour). */
  WEBHOOK_RETRY_SCALE: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return 1;
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0 || n > 100) {
        ctx.addIssue({ code: 'custom', message: 'expected a number above 0 and at most 100' });
        return z.NEVER;
      }
      return n;
    }),
  /** Set by `npm start`: the launcher's pid, watched so children never outlive it. */
  DOCPROC_PARENT_PID: int(0, 0, 2 ** 31),
});

export type RawConfig = z.infer<typeof configSchema>;

export interface Config extends RawConfig {
  /** Absolute data directory. */
  dataDir: string;
  /** True when the API listens on a loopback address only. */
  loopbackOnly: boolean;
  /** Parsed `ALLOW_DOC_WHITELIST` entries. */
  docWhitelist: string[];
  /** Temporal address actually used (`TEMPORAL_ADDRESS` or the local dev server). */
  temporalAddress: string;
}

export class ConfigError extends Error {}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

/** Parses and validates configuration from an environment object (default `process.env`). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const names = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${names.join('; ')}`);
  }
  const raw = parsed.data;
  if (raw.STORAGE === 's3') {
    const missing = (['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const).filter((k) => !raw[k]);
    if (missing.length) throw new ConfigError(`STORAGE=s3 needs ${missing.join(', ')}`);
  }
  if (raw.S3_BUCKET.length < 3) throw new ConfigError('S3_BUCKET: bucket names need 3 or more characters');
  const docWhitelist = (raw.ALLOW_DOC_WHITELIST ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    ...raw,
    dataDir: path.resolve(raw.DATA_DIR),
    loopbackOnly: isLoopbackHost(raw.HOST),
    docWhitelist,
    temporalAddress: raw.TEMPORAL_ADDRESS ?? `127.0.0.1:${raw.TEMPORAL_DEV_PORT}`,
  };
}
