import { classifyResponse, type DeliveryOutcome } from '../../core/jobs/webhooks';
import { ForbiddenTargetError, guardedFetch, OutboundError, type OutboundPolicy } from '../http/ssrf';
import { webhookHeaders } from './signature';

export interface DeliverWebhookOptions {
  url: string;
  /** Serialised once as JSON: the signed text is exactly the sent text. */
  body: unknown;
  /** `X-Webhook-Id`: unique per event, the same on every attempt. */
  id: string;
  token?: string;
  signingSecret?: string;
  /** Default 15 s. */
  timeoutMs?: number;
  policy: OutboundPolicy;
}

export interface DeliveryResult {
  outcome: DeliveryOutcome;
  status?: number;
  durationMs: number;
  /** Why it was not delivered; never contains the token. */
  error?: string;
  /** The receiver's `Retry-After`, for the next delay. */
  retryAfter?: string | null;
}

/** The receiver's answer is not needed; a longer one is cut, not an error. */
const RESPONSE_CAP = 64 * 1024;

/**
 * One delivery attempt (contract §4), signed with an `X-Webhook-Timestamp` taken here, at this attempt, so a retry
 * carries a fresh one (receivers reject stale timestamps). Never throws for a failed delivery: the outcome says
 * whether another attempt is worth it. Redirects are not followed (a 3xx is final), so a body is never replayed to a
 * second host.
 */
export async function deliverWebhook(opts: DeliverWebhookOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const redact = (msg: string) => (opts.token ? msg.split(opts.token).join('[redacted]') : msg);
  const timestamp = Math.floor(Date.now() / 1000);
  let body: string;
  try {
    body = JSON.stringify(opts.body) ?? 'null';
  } catch (err) {
    return { outcome: 'give-up', durationMs: elapsed(), error: redact(`body is not serialisable: ${message(err)}`) };
  }
  const headers = webhookHeaders({
    id: opts.id,
    timestamp,
    body,
    token: opts.token,
    signingSecret: opts.signingSecret,
  });
  try {
    const res = await guardedFetch(
      opts.url,
      {
        method: 'POST',
        headers,
        body,
        timeoutMs: opts.timeoutMs ?? 15_000,
        redirect: 'manual',
        maxBytes: RESPONSE_CAP,
      },
      opts.policy,
    );
    return result(res.status, res.headers['retry-after'], elapsed());
  } catch (err) {
    if (err instanceof OutboundError && err.code === 'too_large' && err.status) {
      return result(err.status, undefined, elapsed()); // the status arrived; only the body was too long
    }
    if (err instanceof ForbiddenTargetError) {
      return { outcome: 'give-up', durationMs: elapsed(), error: redact(`forbidden target: ${err.message}`) };
    }
    const final = err instanceof OutboundError && err.code === 'invalid_url';
    return { outcome: final ? 'give-up' : 'retry', durationMs: elapsed(), error: redact(message(err)) };
  }
}

function result(status: number, retryAfter: string | string[] | undefined, durationMs: number): DeliveryResult {
  const outcome = classifyResponse(status);
  const r: DeliveryResult = {
    outcome,
    status,
    durationMs,
    retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
  };
  if (outcome !== 'delivered') r.error = `HTTP ${status}`;
  return r;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
