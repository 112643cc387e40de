import type { IncomingMessage } from 'node:http';
import { guardedStream } from './guarded-stream';
import { OutboundError, type OutboundPolicy } from './target';

/**
 * Outbound HTTP for URLs that clients hand us (contract §2, last bullet): images, sessions, attachments, webhooks,
 * callbacks. Private, loopback, link-local, metadata and reserved targets are refused unless the policy allows them,
 * for literal IPs, DNS names and every redirect hop. The address that was checked is the one connected to (DNS
 * pinning through `lookup`), so a rebinding between check and connect cannot reach an internal service. The rules
 * and the check of a hop: target.ts; the one redirect loop, shared with the downloads that stream: guarded-stream.ts.
 */

export {
  checkTarget,
  ForbiddenTargetError,
  OutboundError,
  outboundPolicy,
  type CheckedTarget,
  type OutboundErrorCode,
  type OutboundPolicy,
} from './target';

export interface GuardedFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overall limit for every hop, DNS included; default 30 s. */
  timeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Response body cap; default 10 MB. */
  maxBytes?: number;
  /** `manual` returns a 3xx response as it is (webhooks do not follow redirects); default `follow`. */
  redirect?: 'follow' | 'manual';
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL of the final hop. */
  url: string;
}

/**
 * Fetches `url` within `policy` (every hop through {@link guardedStream}), its body read up to `maxBytes`; see the
 * module comment. Throws ForbiddenTargetError or OutboundError.
 */
export async function guardedFetch(
  url: string,
  init: GuardedFetchInit,
  policy: OutboundPolicy,
): Promise<GuardedResponse> {
  const { timeoutMs = 30_000, maxRedirects = 5, maxBytes = 10 * 1024 * 1024 } = init;
  // One limit over every hop and the body: the stream's own deadline covers the hops, this one the body too.
  const abort = new AbortController();
  const timeout = () => new OutboundError(`timeout after ${timeoutMs} ms`, 'timeout');
  const timer = setTimeout(() => abort.abort(timeout()), timeoutMs);
  try {
    const res = await guardedStream(
      url,
      {
        method: init.method,
        headers: init.headers,
        body: init.body,
        timeoutMs,
        maxRedirects,
        redirect: init.redirect,
        signal: abort.signal,
      },
      policy,
    );
    const body = await readBody(res.body, maxBytes, abort.signal, timeout);
    return { status: res.status, headers: res.headers, body, url: res.url };
  } finally {
    clearTimeout(timer);
  }
}

function readBody(res: IncomingMessage, maxBytes: number, signal: AbortSignal, timeout: () => Error): Promise<Buffer> {
  const status = res.statusCode ?? 0;
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      signal.removeEventListener('abort', onAbort);
      res.destroy();
      reject(err);
    };
    const tooLarge = () => fail(new OutboundError(`response larger than ${maxBytes} bytes`, 'too_large', status));
    const onAbort = () => fail(timeout());
    if (signal.aborted) return onAbort();
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) return tooLarge();
    signal.addEventListener('abort', onAbort, { once: true });
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) tooLarge();
      else chunks.push(chunk);
    });
    res.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks));
    });
    const broken = (err?: Error) => {
      if (signal.aborted) return fail(timeout());
      const why = `response aborted: ${err?.message ?? 'connection closed'}`;
      fail(new OutboundError(why, 'network', status, { cause: err }));
    };
    res.on('error', broken);
    res.on('close', () => res.complete || broken());
  });
}
