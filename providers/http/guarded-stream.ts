import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkTarget, type CheckedTarget, OutboundError, type OutboundPolicy } from './target';

/**
 * The one redirect loop of outbound HTTP (contract §2): every hop checked by `checkTarget` (target.ts), the checked
 * address the one connected to, credentials dropped when a redirect leaves the origin, a 303 (and a 301/302 of a
 * POST) followed as a GET without its body. The answer is handed over with its body unread: downloads stream it to
 * a file instead of holding it in memory (download.ts), `guardedFetch` (ssrf.ts) reads it up to its cap. The caller
 * reads or destroys `body`.
 */

export interface GuardedStreamInit {
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Limit for everything before the body: DNS, connect and the answer's headers, over every hop. */
  timeoutMs: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Aborts the request (an activity's cancellation); the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** `manual` answers a 3xx as it is (webhooks do not follow redirects); default `follow`. */
  redirect?: 'follow' | 'manual';
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
/** Dropped when a redirect leaves the origin, as browsers do. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-callback-token', 'x-api-key']);

const asError = (reason: unknown): Error => (reason instanceof Error ? reason : new Error(String(reason)));

/** Requests `url` within `policy` and resolves once the final hop's headers are in; see the module comment. */
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
  const hop: Hop = { method: (init.method ?? 'GET').toUpperCase(), headers: { ...init.headers }, body: init.body };
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const target = await raceAbort(checkTarget(current, policy), signal, why);
      const res = await send(target, hop, signal, why);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || !location || init.redirect === 'manual')
        return { status, headers: res.headers, body: res, url: target.url.href };
      res.destroy();
      if (redirects >= maxRedirects)
        throw new OutboundError(`more than ${maxRedirects} redirects`, 'too_many_redirects', status);
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new OutboundError(`invalid redirect from ${target.url.host}`, 'invalid_url', status);
      }
      if (next.origin !== target.url.origin) hop.headers = omit(hop.headers, (k) => CREDENTIAL_HEADERS.has(k));
      if ((status === 303 && hop.method !== 'HEAD') || ((status === 301 || status === 302) && hop.method === 'POST')) {
        hop.method = 'GET';
        hop.body = undefined;
        hop.headers = omit(hop.headers, (k) => k === 'content-type');
      }
      current = next.href;
    }
  } finally {
    clearTimeout(timer);
  }
}

type Hop = { method: string; headers: Record<string, string>; body?: string | Buffer };

function omit(headers: Record<string, string>, drop: (lowerName: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop(k.toLowerCase())));
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
function send(t: CheckedTarget, hop: Hop, signal: AbortSignal, why: () => Error): Promise<IncomingMessage> {
  // Connect to the address that was checked, whatever the name resolves to by now; Host and SNI keep the name.
  const lookup = ((_name: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: t.address, family: t.family }]);
    else cb(null, t.address, t.family);
  }) as unknown as LookupFunction;
  const headers = omit(hop.headers, (k) => k === 'content-length' || k === 'host');
  if (hop.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(hop.body));
  const client = t.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(why());
    // agent: false, so no pooled socket opened under another check or policy is reused.
    const req = client.request(
      {
        hostname: t.hostname,
        port: t.port,
        path: `${t.url.pathname}${t.url.search}`,
        method: hop.method,
        headers,
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
    req.end(hop.body);
  });
}
