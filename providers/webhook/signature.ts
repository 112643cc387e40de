import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signing of contract §4 (Standard Webhooks style), with node:crypto. Activity side only: workflow code
 * must not import this (the Temporal bundler refuses `node:crypto`). Receivers, tests among them, verify with
 * {@link verifyWebhookSignature}.
 */

const SIGNATURE_VERSION = 'v1';
export const WEBHOOK_USER_AGENT = 'docproc-webhooks/1';

/** Base64 HMAC-SHA256 of `"<id>.<timestamp>.<body>"`, keyed by the UTF-8 bytes of `secret`. */
function digest(secret: string, id: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${id}.${timestamp}.${body}`, 'utf8')
    .digest('base64');
}

/**
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the UTF-8 bytes of `secret`. `timestamp` is Unix
 * seconds and must be an integer, so the signed text equals the header's.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  if (!Number.isSafeInteger(timestamp)) throw new RangeError('webhook timestamp must be integer Unix seconds');
  return `${SIGNATURE_VERSION},${digest(secret, id, timestamp, body)}`;
}

/**
 * True when one of the space-separated signatures in `header` is a valid `v1` signature of the event. Compares the
 * base64 text with `timingSafeEqual` (base64 decoding is lenient, so the text, not the decoded bytes, must match);
 * never throws on malformed input.
 */
export function verifyWebhookSignature(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  if (typeof header !== 'string' || !Number.isSafeInteger(timestamp)) return false;
  const expected = Buffer.from(digest(secret, id, timestamp, body), 'utf8');
  let ok = false;
  for (const part of header.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== SIGNATURE_VERSION) continue;
    const given = Buffer.from(part.slice(comma + 1), 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
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
