import { z } from 'zod';
import { AppError } from '../../core/errors';
import { mapPool } from '../../core/runtime/pool';
import {
  backoffDelay,
  type BackoffPolicy,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  parseRetryAfter,
  redact,
  sleep,
} from '../llm/retry';
import type {
  ExternalOcr,
  ExternalOcrPage,
  ExternalOcrRaw,
  OcrImageOptions,
  OcrPdfOptions,
} from '../../domain/engines/external-ocr';
import { ExternalOcrError, type ExternalOcrOptions, type ExternalOcrSettings } from './types';

export * from './types';

/**
 * External OCR over a Mistral-OCR-compatible HTTP API (`POST {base}/v1/ocr`, contract §6). The document travels as
 * a base64 `data:` URL; big documents are cut into page groups of at most `maxPagesPerRequest` with the `pages`
 * field, and the answers are merged back in page order. The endpoint is configured by the operator, not by clients,
 * so plain `fetch` is used (no SSRF guard), with a timeout per request.
 */

const coord = z
  .number()
  .nullish()
  .transform((n) => Math.round(n ?? 0));
const responseSchema = z.object({
  pages: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      markdown: z.string(),
      images: z
        .array(
          z.object({
            id: z.string(),
            top_left_x: coord,
            top_left_y: coord,
            bottom_right_x: coord,
            bottom_right_y: coord,
            image_base64: z.string().nullish(),
          }),
        )
        .nullish(),
      dimensions: z.object({ dpi: z.number(), height: z.number(), width: z.number() }).nullish(),
    }),
  ),
  model: z.string().nullish(),
  usage_info: z.object({ pages_processed: z.number().nullish(), doc_size_bytes: z.number().nullish() }).nullish(),
});
type OcrResponse = z.infer<typeof responseSchema>;

type Failure = { retry: boolean; reason: string; status?: number; retryAfterMs?: number; said?: string };

const IMAGE_MIME: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
};
const snippet = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** `data:` URL for a picture that came back as bare base64 (some compatible servers do that). */
function asDataUrl(b64: string | null | undefined, id: string): string | null {
  if (!b64) return null;
  if (b64.startsWith('data:')) return b64;
  const ext = /\.([a-z0-9]+)$/i.exec(id)?.[1]?.toLowerCase() ?? '';
  return `data:${IMAGE_MIME[ext] ?? 'image/jpeg'};base64,${b64}`;
}

/** The endpoint: `{url}/v1/ocr`, unless the URL already ends with `/v1` or `/v1/ocr`. */
export function ocrEndpoint(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (/\/v1\/ocr$/.test(base)) return base;
  return /\/v1$/.test(base) ? `${base}/ocr` : `${base}/v1/ocr`;
}

/** Splits `pages` into consecutive groups of at most `size`. */
export function pageGroups(pages: number[], size: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < pages.length; i += size) out.push(pages.slice(i, i + size));
  return out;
}

class MistralOcr implements ExternalOcr {
  private readonly endpoint: string;
  private readonly backoff: BackoffPolicy;

  constructor(
    private readonly cfg: ExternalOcrSettings,
    private readonly options: ExternalOcrOptions,
  ) {
    this.endpoint = ocrEndpoint(cfg.url);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  }

  describe() {
    return { model: this.cfg.model, host: new URL(this.endpoint).host };
  }

  async ocrPdf(bytes: Buffer, opts: OcrPdfOptions): Promise<ExternalOcrRaw> {
    const pages = this.pagesToAsk(opts);
    const max = Math.max(1, this.cfg.maxPagesPerRequest ?? 50);
    const document = { type: 'document_url', document_url: `data:application/pdf;base64,${bytes.toString('base64')}` };
    const groups: (number[] | undefined)[] =
      pages && (opts.pages || pages.length > max) ? pageGroups(pages, max) : [undefined];
    const total = pages?.length ?? 0;
    let done = 0;
    const answers = await this.pool(groups, opts.signal, async (group, signal) => {
      const res = await this.request(
        { document, include_image_base64: opts.includeImages, ...(group ? { pages: group } : {}) },
        signal,
      );
      const page = this.placePages(res, group);
      done += group?.length ?? res.pages.length;
      opts.onProgress?.(done, Math.max(total, done));
      return page;
    });
    return merge(answers, this.cfg.model, bytes.length);
  }

  async ocrImage(bytes: Buffer, mime: string, opts: OcrImageOptions = {}): Promise<ExternalOcrRaw> {
    if (!/^image\/[a-z0-9.+-]+$/i.test(mime)) {
      throw new AppError('INVALID_FORMAT', `External OCR takes images, not ${mime}`, {
        error_type: 'unsupported_format',
      });
    }
    const document = { type: 'image_url', image_url: `data:${mime};base64,${bytes.toString('base64')}` };
    const res = await this.request({ document, include_image_base64: opts.includeImages ?? false }, opts.signal);
    return merge([this.placePages(res, undefined)], this.cfg.model, bytes.length);
  }

  /** The requested pages, sorted and unique; undefined means "the whole document, page count unknown". */
  private pagesToAsk(opts: OcrPdfOptions): number[] | undefined {
    const count = opts.pageCount;
    if (count !== undefined && (!Number.isInteger(count) || count < 1)) {
      throw new AppError('VALIDATION_ERROR', 'pageCount must be a positive integer', {
        issues: [{ path: 'pageCount', message: 'positive integer' }],
      });
    }
    if (!opts.pages) return count ? Array.from({ length: count }, (_, i) => i) : undefined;
    const bad = opts.pages.find((p) => !Number.isInteger(p) || p < 0 || (count !== undefined && p >= count));
    if (bad !== undefined || opts.pages.length === 0) {
      const message = bad === undefined ? 'no page asked for' : `page index ${bad} is out of range`;
      throw new AppError('VALIDATION_ERROR', message, { issues: [{ path: 'pages', message }] });
    }
    return [...new Set(opts.pages)].sort((a, b) => a - b);
  }

  /** Runs `work` over `items` with bounded concurrency; the first failure stops the rest and is thrown. */
  private async pool<T, R>(
    items: T[],
    outer: AbortSignal | undefined,
    work: (item: T, signal: AbortSignal) => Promise<R>,
  ): Promise<R[]> {
    const stop = new AbortController();
    const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal;
    const results = await mapPool(items, Math.max(1, this.options.concurrency ?? 2), (item) =>
      work(item, signal).catch((err: unknown) => {
        stop.abort();
        throw err;
      }),
    ).catch((err: unknown) => {
      throw outer?.aborted ? outer.reason : err;
    });
    if (outer?.aborted) throw outer.reason;
    return results;
  }

  /** One `/v1/ocr` call with retries on 429, 5xx, network errors and timeouts. */
  private async request(body: Record<string, unknown>, signal?: AbortSignal): Promise<OcrResponse> {
    const payload = JSON.stringify({ model: this.cfg.model, ...body });
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (this.cfg.apiKey) headers.Authorization = `Bearer ${this.cfg.apiKey}`;
    const maxAttempts = Math.max(0, this.cfg.maxRetries ?? 3) + 1;
    const timeoutMs = this.cfg.timeoutMs ?? 300_000;
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      let failure: Failure;
      try {
        const res = await fetch(this.endpoint, {
          method: 'POST',
          headers,
          body: payload,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        const text = await res.text();
        if (res.ok) {
          const parsed = parseResponse(text);
          if (parsed.ok) return parsed.value;
          failure = { retry: false, reason: 'malformed response', status: res.status, said: parsed.error };
        } else {
          failure = {
            retry: isRetryableStatus(res.status),
            reason: `HTTP ${res.status}`,
            status: res.status,
            retryAfterMs: parseRetryAfter(res.headers),
            said: upstreamMessage(text),
          };
        }
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        const code = (err as { cause?: { code?: unknown } }).cause?.code;
        failure = timeout.aborted
          ? { retry: true, reason: `timeout after ${timeoutMs} ms` }
          : { retry: true, reason: `network error${typeof code === 'string' ? ` (${code})` : ''}` };
      }
      if (!failure.retry || attempt >= maxAttempts) throw this.toError(failure, attempt);
      const delayMs = backoffDelay(attempt, failure.retryAfterMs, this.backoff);
      this.options.onRetry?.({ attempt, maxAttempts, delayMs, reason: failure.reason, status: failure.status });
      await sleep(delayMs, signal);
    }
  }

  /**
   * Puts the answer's pages at their document indexes. Mistral answers absolute indexes; a server that numbers the
   * pages of the request from 0 instead is mapped by position. Anything else is a malformed answer.
   */
  private placePages(res: OcrResponse, asked: number[] | undefined): { res: OcrResponse; pages: ExternalOcrPage[] } {
    let indexes = res.pages.map((p) => p.index);
    if (asked) {
      const set = new Set(asked);
      if (!indexes.every((i) => set.has(i))) {
        if (res.pages.length !== asked.length) {
          throw this.toError({ retry: false, reason: 'malformed response', said: 'pages outside those requested' }, 1);
        }
        indexes = asked;
      }
    }
    const pages = res.pages.map((p, n) => ({
      index: indexes[n],
      markdown: p.markdown,
      images: (p.images ?? []).map((im) => ({
        id: im.id,
        image_base64: asDataUrl(im.image_base64, im.id),
        top_left_x: im.top_left_x,
        top_left_y: im.top_left_y,
        bottom_right_x: im.bottom_right_x,
        bottom_right_y: im.bottom_right_y,
      })),
      ...(p.dimensions ? { dimensions: p.dimensions } : {}),
    }));
    return { res, pages };
  }

  private toError(f: Failure, attempts: number): ExternalOcrError {
    const said = f.said ? `: ${snippet(redact(f.said, this.cfg.apiKey))}` : '';
    const host = this.describe().host;
    const message =
      f.retry || attempts > 1
        ? `The external OCR endpoint (${host}) failed after ${attempts} attempt${attempts === 1 ? '' : 's'} (last: ${f.reason})${said}`
        : `The external OCR endpoint (${host}) failed (${f.reason})${said}`;
    const details = {
      provider: 'external_ocr' as const,
      attempts,
      reason: f.reason,
      ...(f.status ? { status: f.status } : {}),
      ...(f.retry && f.retryAfterMs !== undefined ? { retry_after_ms: f.retryAfterMs } : {}),
    };
    return new ExternalOcrError(message, details, f.retry || (f.status !== undefined && f.status >= 500));
  }
}

function parseResponse(text: string): { ok: true; value: OcrResponse } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'the body is not JSON' };
  }
  const r = responseSchema.safeParse(json);
  if (r.success) return { ok: true, value: r.data };
  const first = r.error.issues[0];
  return { ok: false, error: `${first.path.join('.') || 'body'}: ${first.message}` };
}

/** The error text of a Mistral or FastAPI-style error body (`message`, `detail`, `error.message`). */
function upstreamMessage(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as { message?: unknown; detail?: unknown; error?: { message?: unknown } };
    const m = j.message ?? j.error?.message ?? j.detail;
    if (m === undefined) return undefined;
    return typeof m === 'string' ? m : JSON.stringify(m);
  } catch {
    return text.trim() ? text.trim() : undefined;
  }
}

function merge(
  parts: { res: OcrResponse; pages: ExternalOcrPage[] }[],
  fallbackModel: string,
  size: number,
): ExternalOcrRaw {
  const byIndex = new Map<number, ExternalOcrPage>();
  for (const p of parts) for (const page of p.pages) byIndex.set(page.index, page);
  const pages = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const processed = parts.reduce((sum, p) => sum + (p.res.usage_info?.pages_processed ?? p.pages.length), 0);
  const model = parts.find((p) => p.res.model)?.res.model ?? fallbackModel;
  return { pages, model, usage_info: { pages_processed: processed, doc_size_bytes: size } };
}

/** The provider for this configuration, or null when none is configured (`Config.externalOcr`). */
export function createExternalOcr(
  cfg: ExternalOcrSettings | null,
  options: ExternalOcrOptions = {},
): ExternalOcr | null {
  return cfg ? new MistralOcr(cfg, options) : null;
}

/** The provider, or 503 `PROVIDER_NOT_CONFIGURED` naming the variables to set. Call after validation (contract §1). */
export function requireExternalOcr(provider: ExternalOcr | null | undefined): ExternalOcr {
  if (provider) return provider;
  throw new AppError(
    'PROVIDER_NOT_CONFIGURED',
    'No external OCR is configured: set EXTERNAL_OCR_URL (and EXTERNAL_OCR_API_KEY).',
    {
      provider: 'external_ocr',
      variables: ['EXTERNAL_OCR_URL', 'EXTERNAL_OCR_API_KEY', 'EXTERNAL_OCR_MODEL'],
    },
  );
}
