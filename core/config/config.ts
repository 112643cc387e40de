// The service configuration. This module is the only reader of `process.env`: every other module receives a
// `Config`, read through the environment's schema (core/config/config-schema.ts). Errors name the variable, never its value,
// so a bad secret never reaches a log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configSchema, type RawConfig } from './config-schema';
import { SMALLEST_PDF_PAGE_GROUP, TEMPORAL_PENDING_LIMIT } from '../jobs/fanout';
import {
  localLlmConfig,
  llmProviderOf,
  resolveLlm,
  type LlmConfig,
  type LlmProviderName,
  type LocalLlmConfig,
} from './config-llm';

export type { LlmPrices } from './config-fields';
export { configSchema, DEFAULT_ENGINE_STALL_TIMEOUT_MS, type WorkerQueueKind } from './config-schema';
export { DEFAULT_LLM_BASE_URL, type LlmConfig } from './config-llm';

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

/**
 * LibreOffice's `soffice` (the office engine): `LIBREOFFICE_PATH`, else the first `soffice` on PATH, else Debian's
 * /usr/bin/soffice (what the setup installs). Read at the worker's start, not per conversion.
 */
export function libreOfficePath(
  config: Pick<RawConfig, 'LIBREOFFICE_PATH'>,
  searchPath: string = process.env.PATH ?? '',
): string {
  if (config.LIBREOFFICE_PATH) return config.LIBREOFFICE_PATH;
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'soffice');
    if (fs.existsSync(candidate)) return candidate;
  }
  return '/usr/bin/soffice';
}

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
      : [path.resolve(raw.DATA_DIR)],
  };
}

/**
 * Bounds that keep a workflow run under Temporal's limit of 2,000 pending child workflows and pending activities
 * per run (past it the server refuses the run's next command and the job is wedged): a batch runs `BATCH_WINDOW`
 * children at once; a `MAX_PDF_PAGES` document read in the smallest page groups (2 pages, `local_ocr`) schedules
 * one activity per group. Page groups in flight are bounded per job (core/jobs/fanout.ts), but runs recorded before that
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

/** Variables a spawned tool may see (`toolEnvironment`): what engines need to run, nothing of the service's own. */
const TOOL_ENV_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LD_LIBRARY_PATH',
  'TESSDATA_PREFIX',
  'OMP_THREAD_LIMIT',
  'OMP_NUM_THREADS',
  'OPENBLAS_NUM_THREADS',
  'MKL_NUM_THREADS',
  'FONTCONFIG_PATH',
  'FONTCONFIG_FILE',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  // Python's module path: an operator's site packages for the speech engine (and the tests' engine trace hook).
  'PYTHONPATH',
]);

/**
 * The environment of a spawned tool (tesseract, ffmpeg, poppler, LibreOffice, yt-dlp, the tool launcher, the speech
 * engine): an allow-list of the variables engines need (search path, home, locale, temp directories, thread and font
 * settings, CA files and proxies), plus `extra`. Never the service's keys and secrets (`SERVICE_API_KEY`,
 * `LLM_API_KEY`, `EXTERNAL_OCR_API_KEY`, `S3_SECRET_KEY`, `WEBHOOK_SIGNING_SECRET`, `TEMPORAL_API_KEY`, ...) nor any
 * other setting of the service: a tool that a hostile input exploits finds nothing to steal in its environment.
 */
export function toolEnvironment(
  extra: Record<string, string> = {},
  env: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    // `DOCPROC_TEST_*`: the test runner's tag (scripts/test.mjs) and its engine hooks; never a setting or a secret.
    if (value !== undefined && (TOOL_ENV_NAMES.has(name) || name.startsWith('LC_') || name.startsWith('DOCPROC_TEST_')))
      out[name] = value;
  }
  return { ...out, ...extra };
}
