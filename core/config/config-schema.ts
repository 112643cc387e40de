// The environment's schema: one field per variable of the README's configuration table, with its default and bounds
// (test/integration/compose.test.ts checks that every one is in docker-compose.yml). core/config/config.ts reads the
// environment through it and derives the resolved configuration (endpoints, providers, slots).
import { z } from 'zod';
import { bool, decimal, httpUrl, int, llmPrices, optionalString } from './config-fields';

/** The model asked of the external OCR endpoint when `EXTERNAL_OCR_MODEL` is not set. */
const DEFAULT_EXTERNAL_OCR_MODEL = 'mistral-ocr-latest';

/** `ENGINE_STALL_TIMEOUT_MS` when not set: 10 minutes, far beyond any page, chunk or decode step's silences. */
export const DEFAULT_ENGINE_STALL_TIMEOUT_MS = 600_000;

/** The task queues a worker can poll (core/jobs/ids.ts `taskQueues`). */
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
  WORKER_DOWNLOAD_SLOTS: int(20, 1, 1000),
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
  /** Slow clients (api/middleware/slow-clients.ts): how long a connection may take to send a request's head. */
  API_HEADERS_TIMEOUT_MS: int(20_000, 100, 3_600_000),
  /** A request body that sends no byte for this long is cut (a stalled upload); also the window of the rate floor. */
  API_BODY_IDLE_TIMEOUT_MS: int(30_000, 100, 3_600_000),
  /** The slowest pace a request body may keep, averaged over each API_BODY_IDLE_TIMEOUT_MS (bytes/s); 0: no floor. */
  API_BODY_MIN_BYTES_PER_SEC: int(8192, 0, 1_000_000_000),
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
  MAX_EMBEDDED_IMAGES: int(2000, 1, 1_000_000),
  MAX_EMBEDDED_IMAGES_MB: int(1024, 1, 1_000_000),
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
   * Ready means warm: before the API listens and before the worker polls, every pool, thread, launcher and engine
   * process the first requests need is started and has done one real unit of work (api/warm-up.ts, worker/warm-up.ts).
   */
  WARM_UP: bool(true),
  /**
   * Synchronous `native` requests to `/api/pdf/process` (an upload, text or Markdown, no template or page images, the
   * poppler text engine) that read at most this many pages are answered by the API without a job: pdfinfo and
   * pdftotext run as child processes of the API (Markdown: with pdftohtml, in a worker thread). 0: always a job.
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
  /** Whether the LLM endpoint answers a repeated `Idempotency-Key` from its first request; unset: local only. */
  LLM_IDEMPOTENCY_KEYS: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    bool(false).optional(),
  ),
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
  /** LibreOffice's `soffice` for the office engine (issue 35); default: `soffice` on PATH, else /usr/bin/soffice. */
  LIBREOFFICE_PATH: optionalString,
  /** yt-dlp for hosted video downloads; default: in the speech venv of the engine cache (see `ytDlpPath`). */
  YTDLP_PATH: optionalString,
  /** OpenAI-compatible `/audio/transcriptions` endpoint for `SPEECH_PROVIDER=openai`; see `Config.speechApi`. */
  SPEECH_BASE_URL: httpUrl,
  SPEECH_API_KEY: optionalString,
  SPEECH_TIMEOUT_MS: int(300_000, 100, 3_600_000),
  /** Set by `npm start`: the launcher's pid, watched so children never outlive it. */
  DOCPROC_PARENT_PID: int(0, 0, 2 ** 31),
});

export type RawConfig = z.infer<typeof configSchema>;
