import { AppError } from '../../core/errors';
import type { BackoffPolicy } from '../llm/retry';

/** The shapes of the external OCR provider (Mistral OCR's wire format, as `data.external_ocr_raw` shows it). */

/** One picture the OCR found on a page; `image_base64` is a `data:` URL, null when images were not asked for. */
export interface ExternalOcrImage {
  id: string;
  image_base64: string | null;
  top_left_x: number;
  top_left_y: number;
  bottom_right_x: number;
  bottom_right_y: number;
}

export interface ExternalOcrPage {
  /** 0-based page index within the whole document. */
  index: number;
  markdown: string;
  images: ExternalOcrImage[];
  dimensions?: { dpi: number; height: number; width: number } | null;
}

/**
 * The merged answer: `data.external_ocr_raw` of `/api/pdf/process-external-ocr`. Pages are in ascending index order.
 */
export interface ExternalOcrRaw {
  pages: ExternalOcrPage[];
  model: string;
  /** `pages_processed` summed over every request; `doc_size_bytes` is the size of the document sent. */
  usage_info: { pages_processed: number; doc_size_bytes: number };
}

export interface OcrPdfOptions {
  /** 0-based page indexes to recognise; default every page. */
  pages?: number[];
  /** The document's page count: lets a big document be split into groups even when `pages` is not given. */
  pageCount?: number;
  /** Ask for the pictures as base64 (`include_image_base64`). */
  includeImages: boolean;
  signal?: AbortSignal;
  /** After each page group: pages done so far and pages asked for. */
  onProgress?(done: number, total: number): void;
}

export interface OcrImageOptions {
  includeImages?: boolean;
  signal?: AbortSignal;
}

export interface ExternalOcrRetryInfo {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
  status?: number;
}

export interface ExternalOcr {
  ocrPdf(bytes: Buffer, opts: OcrPdfOptions): Promise<ExternalOcrRaw>;
  /** A single image (`image_url` document); the answer has one page, index 0. */
  ocrImage(bytes: Buffer, mime: string, opts?: OcrImageOptions): Promise<ExternalOcrRaw>;
  /** Model and endpoint host, for logs and health (never the key). */
  describe(): { model: string; host: string };
}

export interface ExternalOcrSettings {
  /** Base URL (`https://api.mistral.ai`), or one ending in `/v1` or `/v1/ocr`. */
  url: string;
  apiKey?: string;
  model: string;
  /** Per request; default 300 000. */
  timeoutMs?: number;
  /** Retries after the first attempt; default 3. */
  maxRetries?: number;
  /** Default 50. */
  maxPagesPerRequest?: number;
}

export interface ExternalOcrOptions {
  /** Overrides of the backoff (base 500 ms ×2, cap 20 s, `Retry-After` cap 60 s); tests shrink it. */
  backoff?: Partial<BackoffPolicy>;
  /** Page groups in flight at once; default 2. */
  concurrency?: number;
  /** Called before every wait for another attempt, for logging. */
  onRetry?(info: ExternalOcrRetryInfo): void;
}

/**
 * 502 `UPSTREAM_ERROR` with `details.provider = 'external_ocr'`; `retryable` says whether the endpoint is out for now
 * (429, 5xx, a timeout, a network error), which the error boundary waits out (`PROVIDER_OUTAGE_MAX_MS`).
 */
export class ExternalOcrError extends AppError {
  constructor(
    message: string,
    details: { provider: 'external_ocr'; attempts: number; reason: string; status?: number; retry_after_ms?: number },
    retryable = false,
  ) {
    super('UPSTREAM_ERROR', message, details, { retryable, retryAfterMs: details.retry_after_ms });
    this.name = 'ExternalOcrError';
  }
}
