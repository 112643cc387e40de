import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkTarget, type CheckedTarget, OutboundError, type OutboundPolicy } from './ssrf';

/**
 * A GET under the same address rules as `guardedFetch` (ssrf.ts: every hop checked by `checkTarget`, the checked
 * address is the one connected to, credentials dropped when a redirect leaves the origin), whose answer is handed
 * over with its body unread: downloads stream it to a file instead of holding it in memory (download.ts). The
 * caller reads or destroys `body`.
 */

export interface GuardedStreamInit {
  headers?: Record<string, string>;
  /** Limit for everything before the body: DNS, connect and the answer's headers, over every hop. */
  timeoutMs: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Aborts the request (an activity's cancellation); the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface GuardedStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body, not read yet. */
  body: IncomingMessage;
  /** The URL of the final hop. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin, as browsers do (ssrf.ts drops the same). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-callback-token', 'x-api-key']);

const asError = (reason: unknown): Error => (reason instanceof Error ? reason : new Error(String(reason)));

/** GETs `url` within `policy` and resolves once the final hop's headers are in; see the module comment. */
export async function guardedStream(
  url: string,
  init: GuardedStreamInit,
  policy: OutboundPolicy,
): Promise<GuardedStream> {
  const { timeoutMs, maxRedirects = 5 } = init;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
  const why = () =>
    init.signal?.aborted ? asError(init.signal.reason) : new OutboundError(`timeout after ${timeoutMs} ms`, 'timeout');
  let headers = { ...init.headers };
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const target = await raceAbort(checkTarget(current, policy), signal, why);
      const res = await send(target, headers, signal, why);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || !location) return { status, headers: res.headers, body: res, url: target.url.href };
      res.destroy();
      if (redirects >= maxRedirects)
        throw new OutboundError(`more than ${maxRedirects} redirects`, 'too_many_redirects', status);
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new OutboundError(`invalid redirect from ${target.url.host}`, 'invalid_url', status);
      }
      if (next.origin !== target.url.origin)
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
      current = next.href;
    }
  } finally {
    clearTimeout(timer);
  }
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onAbort());
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** One hop to the checked address; resolves with the answer whose body is left to the caller. */
function send(
  t: CheckedTarget,
  headers: Record<string, string>,
  signal: AbortSignal,
  why: () => Error,
): Promise<IncomingMessage> {
  // Connect to the address that was checked, whatever the name resolves to by now; Host and SNI keep the name.
  const lookup = ((_name: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: t.address, family: t.family }]);
    else cb(null, t.address, t.family);
  }) as unknown as LookupFunction;
  const client = t.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(why());
    const outgoing = Object.fromEntries(
      Object.entries(headers).filter(([k]) => !['content-length', 'host'].includes(k.toLowerCase())),
    );
    // agent: false, so no pooled socket opened under another check or policy is reused.
    const req = client.request(
      {
        hostname: t.hostname,
        port: t.port,
        path: `${t.url.pathname}${t.url.search}`,
        method: 'GET',
        headers: outgoing,
        lookup,
        agent: false,
      },
      (res) => {
        signal.removeEventListener('abort', onAbort);
        resolve(res);
      },
    );
    const onAbort = () => req.destroy(why());
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(why());
      else reject(new OutboundError(`${t.url.host}: ${err.message}`, 'network', undefined, { cause: err }));
    });
    req.end();
  });
}
