import { AppError } from '../../core/errors';
import type { ExternalOcrRetryInfo } from '../../domain/engines/external-ocr';
import type { BackoffPolicy } from '../llm/retry';

// How the external OCR provider is reached and retried, and the error it fails with (its interface and wire shapes:
// domain/engines/external-ocr.ts).

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
