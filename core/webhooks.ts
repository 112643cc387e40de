/**
 * Webhook logic of contract §4 shared by workflows and activities: signing, headers, bodies, response
 * classification and the retry schedule. Pure and free of Node built-ins (HMAC-SHA256 is implemented here), so
 * workflow code may import it: the Temporal bundler refuses `node:crypto`. The only clock read is
 * {@link retryDelayMs}'s default `nowMs`, which is deterministic inside a workflow.
 */

export type WebhookPhase = 'processing' | 'completed' | 'failed';

/** Default number of delivery attempts; with {@link retryDelayMs} they span about an hour. */
export const DEFAULT_WEBHOOK_ATTEMPTS = 8;

const SIGNATURE_VERSION = 'v1';
export const WEBHOOK_USER_AGENT = 'docproc-webhooks/1';

// SHA-256 (FIPS 180-4) over bytes; checked against node:crypto in test/unit/webhooks.test.ts.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

function sha256(data: Uint8Array): Uint8Array {
  const bitLen = data.length * 8;
  const padded = new Uint8Array((((data.length + 9 + 63) >> 6) << 6));
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLen / 0x1_0000_0000));
  view.setUint32(padded.length - 4, bitLen >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** HMAC-SHA256 (RFC 2104) of `"<id>.<timestamp>.<body>"`, keyed by the UTF-8 bytes of `secret`. */
function hmac(secret: string, id: string, timestamp: number, body: string): Uint8Array {
  const utf8 = new TextEncoder();
  let key: Uint8Array = utf8.encode(secret);
  if (key.length > 64) key = sha256(key);
  const ipad = new Uint8Array(64).fill(0x36);
  const opad = new Uint8Array(64).fill(0x5c);
  for (let i = 0; i < key.length; i++) {
    ipad[i] ^= key[i];
    opad[i] ^= key[i];
  }
  return sha256(concat(opad, sha256(concat(ipad, utf8.encode(`${id}.${timestamp}.${body}`)))));
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? B64[n & 63] : '=';
  }
  return out;
}

/** Equal strings in time independent of where they differ (lengths, public for an HMAC, may short-circuit). */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the UTF-8 bytes of `secret` (Standard Webhooks
 * style). `timestamp` is Unix seconds and must be an integer, so the signed text equals the header's.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  if (!Number.isSafeInteger(timestamp)) throw new RangeError('webhook timestamp must be integer Unix seconds');
  return `${SIGNATURE_VERSION},${toBase64(hmac(secret, id, timestamp, body))}`;
}

/**
 * True when one of the space-separated signatures in `header` is a valid `v1` signature of the event.
 * Compares in constant time; never throws on malformed input.
 */
export function verifyWebhookSignature(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  if (typeof header !== 'string' || !Number.isSafeInteger(timestamp)) return false;
  const expected = toBase64(hmac(secret, id, timestamp, body));
  let ok = false;
  for (const part of header.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== SIGNATURE_VERSION) continue;
    if (constantTimeEqual(part.slice(comma + 1), expected)) ok = true;
  }
  return ok;
}

export interface WebhookHeaderOptions {
  /** Unique per event, stable across retries. */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  /** The exact serialised body that is sent. */
  body: string;
  /** The client's callback token: sent as bearer and `X-Callback-Token`, and the signing key. */
  token?: string;
  /** `WEBHOOK_SIGNING_SECRET`: the signing key when no token is set. */
  signingSecret?: string;
}

/** The headers of one delivery attempt (contract §4). The signature header is present only when there is a key. */
export function webhookHeaders(opts: WebhookHeaderOptions): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Webhook-Id': opts.id,
    'X-Webhook-Timestamp': String(opts.timestamp),
  };
  const key = opts.token || opts.signingSecret;
  if (key) headers['X-Webhook-Signature'] = signWebhook(key, opts.id, opts.timestamp, opts.body);
  if (opts.token) {
    headers.Authorization = `Bearer ${opts.token}`;
    headers['X-Callback-Token'] = opts.token;
  }
  return headers;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'give-up';

/** 2xx delivered; 5xx, 408 and 429 are worth another attempt; any other status (3xx, 4xx) is final. */
export function classifyResponse(status: number): DeliveryOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || status === 408 || status === 429) return 'retry';
  return 'give-up';
}

/** First gap of the backoff. */
export const WEBHOOK_RETRY_BASE_MS = 10_000;
/** Growth per attempt. */
export const WEBHOOK_RETRY_FACTOR = 3;
/** Longest computed gap: 10 s, 30 s, 90 s, 270 s, 810 s, 1200 s, 1200 s = 3610 s (about an hour) over 7 gaps. */
export const WEBHOOK_RETRY_CAP_MS = 20 * 60_000;
/** Longest wait a receiver's `Retry-After` may ask for. */
export const WEBHOOK_RETRY_AFTER_CAP_MS = 60 * 60_000;

/** `Retry-After` (delta seconds or HTTP date) as milliseconds from `nowMs`, or null when absent or unusable. */
export function parseRetryAfter(header: string | null | undefined, nowMs: number = Date.now()): number | null {
  if (header == null) return null;
  const v = header.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null; // a bare or signed number in any other form is not an HTTP date
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/**
 * Delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed: `base · factor^(n-1)` capped, or the
 * receiver's `Retry-After` when it asks for longer (itself capped at an hour). Deterministic (no jitter) because
 * workflows compute it; `nowMs` only matters for an HTTP-date `Retry-After`.
 */
export function retryDelayMs(attempt: number, retryAfterHeader?: string | null, nowMs: number = Date.now()): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const exponent = Math.min(n - 1, 32); // the cap is reached long before; keeps the power finite
  const backoff = Math.min(WEBHOOK_RETRY_CAP_MS, WEBHOOK_RETRY_BASE_MS * WEBHOOK_RETRY_FACTOR ** exponent);
  const asked = parseRetryAfter(retryAfterHeader, nowMs);
  if (asked === null) return backoff;
  return Math.max(backoff, Math.min(asked, WEBHOOK_RETRY_AFTER_CAP_MS));
}

export interface WebhookRefs {
  /** Our job id. */
  process: { id: string };
  /** The client's own job id, null when it gave none. */
  job: { id: string | null };
}

export interface ProgressWebhookBody extends WebhookRefs {
  phase: 'processing';
  progress: number;
  message: string;
}

export interface CompletedWebhookBody extends WebhookRefs {
  phase: 'completed';
  message: string;
  data: unknown;
}

export interface FailedWebhookBody extends WebhookRefs {
  phase: 'failed';
  message: string;
  error: unknown;
}

export type WebhookBody = ProgressWebhookBody | CompletedWebhookBody | FailedWebhookBody;

export function progressBody(
  jobId: string,
  clientJobId: string | null | undefined,
  percent: number,
  message: string,
): ProgressWebhookBody {
  return { phase: 'processing', progress: percent, message, process: { id: jobId }, job: { id: clientJobId ?? null } };
}

export function completedBody(
  jobId: string,
  clientJobId: string | null | undefined,
  message: string,
  data: unknown,
): CompletedWebhookBody {
  return { phase: 'completed', message, process: { id: jobId }, job: { id: clientJobId ?? null }, data };
}

export function failedBody(
  jobId: string,
  clientJobId: string | null | undefined,
  message: string,
  error: unknown,
): FailedWebhookBody {
  return { phase: 'failed', message, process: { id: jobId }, job: { id: clientJobId ?? null }, error };
}
