import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { bool, decimal, httpUrl, int, llmPrices, optionalString } from './config-fields';
import { SMALLEST_PDF_PAGE_GROUP, TEMPORAL_PENDING_LIMIT } from './fanout';
import {
  localLlmConfig,
  llmProviderOf,
  resolveLlm,
  type LlmConfig,
  type LlmProviderName,
  type LocalLlmConfig,
} from './config-llm';

export type { LlmPrices } from './config-fields';
export { DEFAULT_LLM_BASE_URL, type LlmConfig } from './config-llm';

/** `ENGINE_STALL_TIMEOUT_MS` when not set: 10 minutes, far beyond any page, chunk or decode step's silences. */
export const DEFAULT_ENGINE_STALL_TIMEOUT_MS = 600_000;

/**
 * The service configuration. This module is the only reader of `process.env`: every other module receives a
 * `Config`. Errors name the variable, never its value, so a bad secret never reaches a log.
 */
/** The task queues a worker can poll (core/ids.ts `taskQueues`). */
const WORKER_QUEUE_KINDS = ['io', 'media', 'llm'] as const;
export type WorkerQueueKind = (typeof WORKER_QUEUE_KINDS)[number];

export const configSchema = z.object({
  NODE_ENV: z.string().optional().default('development'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).optional().default('info'),
  PORT: int(8080, 0, 65535),
  HOST: z.string().optional().default('127.0.0.1'),
  DATA_DIR: z.string().optional().default('.data'),
  /** Where workers keep engine scratch files (mode 0700, removed when each step ends); default `<DATA_DIR>/scratch`. */
  SCRATCH_DIR: optionalString,
  SERVICE_API_KEY: optionalString,
  ALLOW_LOCALHOST_NO_AUTH: bool(false),
  ALLOW_DOC_WHITELIST: optionalString,
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().optional().default('default'),
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TLS: bool(false),
  /** mTLS to a self-hosted cluster: client certificate and key (PEM file paths, both or neither), CA, SNI override. */
  TEMPORAL_TLS_CERT: optionalString,
  TEMPORAL_TLS_KEY: optionalString,
  TEMPORAL_TLS_CA: optionalString,
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  TEMPORAL_DEV_PORT: int(7233, 1, 65535),
  TEMPORAL_UI_PORT: int(8233, 1, 65535),
  TASK_QUEUE_PREFIX: z.string().optional().default('docproc'),
  MEDIA_CONCURRENCY: int(0, 0, 256),
  IO_CONCURRENCY: int(50, 1, 1000),
  /** Model-calling activities a worker runs at once on the `llm` queue; 0: sized to the model (see `llmSlots`). */
  WORKER_LLM_SLOTS: int(0, 0, 1000),
  /**
   * Which task queues this worker process polls: a comma-separated list of `io` (workflows, I/O), `media` (CPU work)
   * and `llm` (model calls), or `all` (also spelled `both`) for all three.
   */
  WORKER_QUEUES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const s = (v ?? '').trim().toLowerCase();
      if (s === '' || s === 'all' || s === 'both') return [...WORKER_QUEUE_KINDS];
      const list = [
        ...new Set(
          s
            .split(',')
            .map((q) => q.trim())
            .filter(Boolean),
        ),
      ];
      const bad = list.filter((q) => !(WORKER_QUEUE_KINDS as readonly string[]).includes(q));
      if (bad.length || !list.length) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a comma-separated list of ${WORKER_QUEUE_KINDS.join(', ')} (or all); got ${bad.join(', ') || 'none'}`,
        });
        return z.NEVER;
      }
      return WORKER_QUEUE_KINDS.filter((q) => list.includes(q));
    }),
  /**
   * Memory budget of a worker (its container): activity slots are handed out only while memory use is under it. 0:
   * none.
   */
  WORKER_MAX_MEMORY_MB: int(0, 0, 16_777_216),
  /** After SIGTERM, how long a worker lets running activities finish before cancelling them (retried elsewhere). */
  WORKER_SHUTDOWN_GRACE_MS: int(30_000, 0, 86_400_000),
  /** After SIGTERM, how long the API lets in-flight requests finish (new ones get 503) before it exits anyway. */
  API_SHUTDOWN_TIMEOUT_MS: int(30_000, 0, 86_400_000),
  /** How often a worker looks for jobs terminated or timed out from outside (their wrap-up runs then). */
  CLOSEOUT_SWEEP_MS: int(3000, 200, 600_000),
  /** `GET /metrics` of the API without the API key (for a scraper inside a trusted network). */
  METRICS_PUBLIC: bool(false),
  /** A worker's Prometheus listener (`/metrics`, with the Temporal SDK's metrics): unset = none, 0 = a free port. */
  WORKER_METRICS_PORT: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  WORKER_METRICS_HOST: z.string().optional().default('127.0.0.1'),
  STORAGE: z.enum(['local', 's3']).optional().default('local'),
  S3_ENDPOINT: optionalString,
  S3_BUCKET: z.string().optional().default('docproc'),
  S3_ACCESS_KEY: optionalString,
  S3_SECRET_KEY: optionalString,
  S3_REGION: z.string().optional().default('us-east-1'),
  MAX_UPLOAD_MB: int(500, 1, 1_000_000),
  MAX_JSON_MB: int(16, 1, 1024),
  /** How deep arrays and objects may nest in a JSON body (or a JSON form field); checked before parsing. */
  MAX_JSON_DEPTH: int(64, 2, 10_000),
  MAX_BATCH_JOBS: int(1000, 1, 100_000),
  /** Synchronous processing requests the API serves at once; beyond, 429 RATE_LIMITED with Retry-After. 0: no bound. */
  MAX_HEAVY_REQUESTS: int(64, 0, 100_000),
  /** Days a finished job's record, results, files and cache entries are kept (fractions allowed); 0 keeps them. */
  RETENTION_DAYS: decimal(30, 0, 36_500),
  MAX_PDF_PAGES: int(2000, 1, 100_000),
  /** Pixels (width × height, read from the header before decoding) an image may have; PDF pages render within it. */
  MAX_IMAGE_PIXELS: int(100_000_000, 1_000_000, 2_000_000_000),
  /**
   * Longest audio or video accepted, in seconds (the contract's 12 h); read from the header, and decoding stops there.
   */
  MAX_MEDIA_SECONDS: int(43_200, 1, 604_800),
  /** Target length of the chunks long audio is cut into for transcription (cuts fall in pauses near it). */
  AUDIO_CHUNK_SECONDS: int(600, 10, 86_400),
  /**
   * How long an engine process (tesseract, ffmpeg, ffprobe, poppler, the speech engine) may go without progress (no
   * output, no progress report, not finished) before it is killed and its attempt fails with a retryable error.
   */
  ENGINE_STALL_TIMEOUT_MS: int(DEFAULT_ENGINE_STALL_TIMEOUT_MS, 100, 86_400_000),
  /** Video frames one request may ask for (`timestamps` and the `interval` grid together). */
  MAX_FRAMES: int(1000, 1, 100_000),
  /** Engine for the PDF text layer: poppler's pdftotext (fast, killable) or pdf.js with our layout rules. */
  PDF_TEXT_ENGINE: z.enum(['poppler', 'pdfjs']).optional().default('poppler'),
  INPUT_ROOTS: optionalString,
  BATCH_WINDOW: int(100, 1, 100_000),
  SYNC_WAIT_MS: int(120_000, 1000, 3_600_000),
  /**
   * Synchronous transformer requests whose input is at most this many bytes are answered by the API without a job: a
   * cache hit from the entry, a model-free HTML operation computed in the API's worker threads. 0: always a job.
   */
  INLINE_TRANSFORM_MAX_BYTES: int(262_144, 0, 16_777_216),
  /**
   * Synchronous `native` text requests to `/api/pdf/process` (an upload, no template, page images or Markdown, the
   * poppler text engine) that read at most this many pages are answered by the API without a job: pdfinfo and
   * pdftotext run as child processes of the API. 0: always a job.
   */
  INLINE_PDF_MAX_PAGES: int(300, 0, 100_000),
  /** How long the synchronous media endpoints (`/api/audio/process`) wait for their job before answering 504. */
  MEDIA_SYNC_WAIT_MS: int(1_800_000, 1000, 86_400_000),
  /**
   * Characters of session text one model call of a track or event summary or a story takes (they map-reduce within it).
   */
  SUMMARY_CHUNK_CHARS: int(12_000, 1000, 1_000_000),
  /** The target groups of `/api/story` (comma-separated). */
  STORY_TARGET_GROUPS: optionalString,
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
  /** OpenAI-compatible endpoint; see `Config.llm` for how these combine. */
  LLM_BASE_URL: httpUrl,
  LLM_API_KEY: optionalString,
  LLM_MODEL: optionalString,
  LLM_VISION_MODEL: optionalString,
  LLM_TIMEOUT_MS: int(120_000, 100, 3_600_000),
  LLM_MAX_RETRIES: int(4, 0, 20),
  /**
   * How long a step waits out a provider outage (429, 5xx, timeouts, a full model queue) before its job fails; 0: not
   * at all.
   */
  PROVIDER_OUTAGE_MAX_MS: int(900_000, 0, 86_400_000),
  LLM_PRICES: llmPrices,
  /**
   * `local` (the model server `npm start` runs), `openai` (an OpenAI-compatible endpoint) or `none`; see `Config.llm`.
   */
  LLM_PROVIDER: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(['local', 'openai', 'none']).optional(),
  ),
  /** The local model server (llm-server/main.ts): loopback port, GGUF file, context, threads, slots, queue bound. */
  LLM_LOCAL_PORT: int(8091, 1, 65535),
  LLM_LOCAL_MODEL_PATH: optionalString,
  LLM_LOCAL_CONTEXT: int(4096, 512, 131_072),
  LLM_LOCAL_THREADS: int(0, 0, 256),
  LLM_LOCAL_SLOTS: int(1, 1, 64),
  LLM_LOCAL_QUEUE: int(16, 0, 100_000),
  /** Fallbacks for `LLM_API_KEY` and `LLM_BASE_URL`. */
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: httpUrl,
  /** Mistral-OCR-compatible endpoint; see `Config.externalOcr`. */
  EXTERNAL_OCR_URL: httpUrl,
  EXTERNAL_OCR_API_KEY: optionalString,
  EXTERNAL_OCR_MODEL: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? DEFAULT_EXTERNAL_OCR_MODEL : v.trim())),
  EXTERNAL_OCR_TIMEOUT_MS: int(300_000, 100, 3_600_000),
  /** Speech to text: `local` (faster-whisper, see providers/speech/local.ts) or `openai`. */
  SPEECH_PROVIDER: z.enum(['local', 'openai']).optional().default('local'),
  /** Local model: `base`, `small` (provisioned into the engine cache) or a model directory. */
  SPEECH_MODEL: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? 'base' : v.trim())),
  /** CTranslate2 threads per engine process; 0 shares the cores among the processes. */
  SPEECH_THREADS: int(0, 0, 256),
  /** The python of the speech venv and the model directory; default: in the engine cache. */
  SPEECH_PYTHON: optionalString,
  SPEECH_MODEL_DIR: optionalString,
  /** The engine cache of scripts/engines.mjs (default `~/.cache/docproc`). */
  DOCPROC_CACHE_DIR: optionalString,
  /** yt-dlp for hosted video downloads; default: in the speech venv of the engine cache (see `ytDlpPath`). */
  YTDLP_PATH: optionalString,
  /** OpenAI-compatible `/audio/transcriptions` endpoint for `SPEECH_PROVIDER=openai`; see `Config.speechApi`. */
  SPEECH_BASE_URL: httpUrl,
  SPEECH_API_KEY: optionalString,
  SPEECH_TIMEOUT_MS: int(300_000, 100, 3_600_000),
  /** Set by `npm start`: the launcher's pid, watched so children never outlive it. */
  DOCPROC_PARENT_PID: int(0, 0, 2 ** 31),
});

type RawConfig = z.infer<typeof configSchema>;

/** The external OCR endpoint as resolved from `EXTERNAL_OCR_*`. */
interface ExternalOcrConfig {
  /**
   * `EXTERNAL_OCR_URL` without a trailing slash: the base (`https://api.mistral.ai`), `…/v1` or the full `…/v1/ocr`.
   */
  url: string;
  /** `EXTERNAL_OCR_API_KEY`, sent as `Authorization: Bearer`; undefined for endpoints that need none. */
  apiKey: string | undefined;
  /** `EXTERNAL_OCR_MODEL`, default `mistral-ocr-latest`. */
  model: string;
  /** `EXTERNAL_OCR_TIMEOUT_MS`, per request, default 300 000. */
  timeoutMs: number;
}

/** The transcription endpoint of `SPEECH_PROVIDER=openai`. */
export interface SpeechApiConfig {
  /**
   * `SPEECH_BASE_URL` without a trailing slash (e.g. `https://api.openai.com/v1`); requests go to
   * `…/audio/transcriptions`.
   */
  baseUrl: string;
  /** `SPEECH_API_KEY`, sent as `Authorization: Bearer`; undefined for endpoints that need none. */
  apiKey: string | undefined;
  /** `SPEECH_MODEL` when set, else `whisper-1`. */
  model: string;
  /** `SPEECH_TIMEOUT_MS`, per request, default 300 000. */
  timeoutMs: number;
}

/** The model asked of the external OCR endpoint when `EXTERNAL_OCR_MODEL` is not set. */
const DEFAULT_EXTERNAL_OCR_MODEL = 'mistral-ocr-latest';

/** The target groups of `/api/story` when `STORY_TARGET_GROUPS` is not set. */
const DEFAULT_STORY_TARGET_GROUPS = ['general public', 'students', 'professionals', 'decision makers', 'journalists'];

export interface Config extends RawConfig {
  /** Parsed `STORY_TARGET_GROUPS`, or the default list. */
  storyTargetGroups: string[];
  /** Absolute data directory. */
  dataDir: string;
  /** Absolute root of the workers' scratch files (`SCRATCH_DIR` or `<DATA_DIR>/scratch`). */
  scratchDir: string;
  /** True when the API listens on a loopback address only. */
  loopbackOnly: boolean;
  /** Parsed `ALLOW_DOC_WHITELIST` entries. */
  docWhitelist: string[];
  /** Temporal address actually used (`TEMPORAL_ADDRESS` or the local dev server). */
  temporalAddress: string;
  /** Which model answers (`LLM_PROVIDER`, else `openai` when an endpoint or key is configured, else `local`). */
  llmProvider: LlmProviderName;
  /**
   * The model the workers call, or null: `LLM_PROVIDER=none`, or an endpoint (`LLM_*` or their `OPENAI_*`
   * fallbacks) without `LLM_MODEL` (there is no default hosted model: an API key alone is not enough). The local
   * provider calls the local model server on `127.0.0.1:LLM_LOCAL_PORT`.
   */
  llm: LlmConfig | null;
  /** The local model server's settings (read by llm-server/main.ts). */
  localLlm: LocalLlmConfig;
  /** The transcription endpoint when `SPEECH_PROVIDER=openai` (which requires `SPEECH_BASE_URL`), else null. */
  speechApi: SpeechApiConfig | null;
  /** The external OCR endpoint, or null when `EXTERNAL_OCR_URL` is not set (an API key alone is not enough). */
  externalOcr: ExternalOcrConfig | null;
  /** Directories `/api/pdf/job` filenames must lie in (contract §6). */
  inputRoots: string[];
}

export class ConfigError extends Error {}

/** The engine cache of scripts/engines.mjs: `DOCPROC_CACHE_DIR` or `~/.cache/docproc`. */
const engineCacheDir = (config: Pick<RawConfig, 'DOCPROC_CACHE_DIR'>): string =>
  path.resolve(config.DOCPROC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'docproc'));

/** The yt-dlp binary: `YTDLP_PATH`, or the one scripts/engines-speech.mjs installs into the speech venv. */
export const ytDlpPath = (config: Pick<RawConfig, 'DOCPROC_CACHE_DIR' | 'YTDLP_PATH'>): string =>
  config.YTDLP_PATH ?? path.join(engineCacheDir(config), 'speech-venv', 'bin', 'yt-dlp');

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
  if (Boolean(raw.TEMPORAL_TLS_CERT) !== Boolean(raw.TEMPORAL_TLS_KEY))
    throw new ConfigError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together (mTLS)');
  if (raw.SPEECH_PROVIDER === 'openai' && !raw.SPEECH_BASE_URL)
    throw new ConfigError('SPEECH_PROVIDER=openai needs SPEECH_BASE_URL');
  if (raw.S3_BUCKET.length < 3) throw new ConfigError('S3_BUCKET: bucket names need 3 or more characters');
  checkPendingBounds(raw);
  const docWhitelist = (raw.ALLOW_DOC_WHITELIST ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    ...raw,
    llmProvider: llmProviderOf(raw),
    llm: resolveLlm(raw, (env.LLM_TIMEOUT_MS ?? '').trim() !== ''),
    localLlm: localLlmConfig(raw),
    speechApi:
      raw.SPEECH_PROVIDER === 'openai' && raw.SPEECH_BASE_URL
        ? {
            baseUrl: raw.SPEECH_BASE_URL,
            apiKey: raw.SPEECH_API_KEY,
            model: env.SPEECH_MODEL?.trim() ? raw.SPEECH_MODEL : 'whisper-1',
            timeoutMs: raw.SPEECH_TIMEOUT_MS,
          }
        : null,
    externalOcr: raw.EXTERNAL_OCR_URL
      ? {
          url: raw.EXTERNAL_OCR_URL,
          apiKey: raw.EXTERNAL_OCR_API_KEY,
          model: raw.EXTERNAL_OCR_MODEL,
          timeoutMs: raw.EXTERNAL_OCR_TIMEOUT_MS,
        }
      : null,
    dataDir: path.resolve(raw.DATA_DIR),
    scratchDir: path.resolve(raw.SCRATCH_DIR ?? path.join(raw.DATA_DIR, 'scratch')),
    loopbackOnly: isLoopbackHost(raw.HOST),
    docWhitelist,
    storyTargetGroups: listOf(raw.STORY_TARGET_GROUPS ?? '').length
      ? [...new Set(listOf(raw.STORY_TARGET_GROUPS ?? ''))]
      : DEFAULT_STORY_TARGET_GROUPS,
    temporalAddress: raw.TEMPORAL_ADDRESS ?? `127.0.0.1:${raw.TEMPORAL_DEV_PORT}`,
    inputRoots: raw.INPUT_ROOTS
      ? raw.INPUT_ROOTS.split(',')
          .map((r) => path.resolve(r.trim()))
          .filter(Boolean)
      : [path.resolve(raw.DATA_DIR), ...(isLoopbackHost(raw.HOST) ? [os.tmpdir()] : [])],
  };
}

/**
 * Bounds that keep a workflow run under Temporal's limit of 2,000 pending child workflows and pending activities
 * per run (past it the server refuses the run's next command and the job is wedged): a batch runs `BATCH_WINDOW`
 * children at once; a `MAX_PDF_PAGES` document read in the smallest page groups (2 pages, `local_ocr`) schedules
 * one activity per group. Page groups in flight are bounded per job (core/fanout.ts), but runs recorded before that
 * bound still schedule every group at once, and the bound keeps the run's history within reach too.
 */
function checkPendingBounds(raw: RawConfig): void {
  if (raw.BATCH_WINDOW > TEMPORAL_PENDING_LIMIT) {
    throw new ConfigError(
      `BATCH_WINDOW: at most ` +
        `${TEMPORAL_PENDING_LIMIT} (Temporal's limit of pending child workflows per run); got ${raw.BATCH_WINDOW}`,
    );
  }
  const groups = Math.ceil(raw.MAX_PDF_PAGES / SMALLEST_PDF_PAGE_GROUP);
  if (groups >= TEMPORAL_PENDING_LIMIT) {
    const max = (TEMPORAL_PENDING_LIMIT - 1) * SMALLEST_PDF_PAGE_GROUP;
    throw new ConfigError(
      `MAX_PDF_PAGES: at most ${max}: a document of ${raw.MAX_PDF_PAGES} pages is read in ${groups} page groups of ${SMALLEST_PDF_PAGE_GROUP}, ` +
        `at or past Temporal's limit of ${TEMPORAL_PENDING_LIMIT} pending activities per run`,
    );
  }
}

/** Media activity slots of a worker: `MEDIA_CONCURRENCY`, or one per core. */
export const mediaSlots = (config: Pick<RawConfig, 'MEDIA_CONCURRENCY'>): number =>
  config.MEDIA_CONCURRENCY || Math.max(1, os.availableParallelism());

/**
 * Model-calling activity slots of a worker (the `llm` queue): `WORKER_LLM_SLOTS`, else sized to the model: with the
 * local model server, twice its generating slots (one call generating and one waiting in its queue per slot, so the
 * model never idles between calls); with a remote endpoint, 16.
 */
export const llmSlots = (config: Pick<Config, 'WORKER_LLM_SLOTS' | 'llmProvider' | 'LLM_LOCAL_SLOTS'>): number =>
  config.WORKER_LLM_SLOTS || (config.llmProvider === 'local' ? 2 * config.LLM_LOCAL_SLOTS : 16);

const listOf = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
