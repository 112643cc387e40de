import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress } from './address-classifier';

/**
 * Outbound HTTP for URLs that clients hand us (contract §2, last bullet): images, sessions, attachments, webhooks,
 * callbacks. Private, loopback, link-local, metadata and reserved targets are refused unless the policy allows them,
 * for literal IPs, DNS names and every redirect hop. The address that was checked is the one connected to (DNS
 * pinning through `lookup`), so a rebinding between check and connect cannot reach an internal service.
 */

/** What outbound requests may reach. */
export interface OutboundPolicy {
  /** `ALLOW_PRIVATE_URLS`: any address is fine. Never inferred from where a process listens ({@link outboundPolicy}). */
  allowPrivate: boolean;
  /** Plain `http:` targets; default true. */
  allowHttp?: boolean;
  /** Exact `host:port` strings (port always written, IPv6 bracketed) that skip the address check. */
  allowedHosts?: string[];
}

/**
 * The outbound policy of every process, API and workers alike (contract §2): `ALLOW_PRIVATE_URLS` and nothing else.
 * Where a process listens decides nothing (a worker of the compose layout listens nowhere); `npm start` sets the
 * variable for all its children when its API is on loopback only (scripts/launch-env.mjs).
 */
export function outboundPolicy(config: { ALLOW_PRIVATE_URLS: boolean }): OutboundPolicy {
  return { allowPrivate: config.ALLOW_PRIVATE_URLS };
}

/** A target this server may not touch (maps to 403 `FORBIDDEN`). Names the host only, never credentials or path. */
export class ForbiddenTargetError extends Error {
  readonly code = 'FORBIDDEN';
  constructor(
    message: string,
    readonly host: string,
  ) {
    super(message);
    this.name = 'ForbiddenTargetError';
  }
}

export type OutboundErrorCode = 'invalid_url' | 'dns' | 'network' | 'timeout' | 'too_large' | 'too_many_redirects';

/** The request could not be completed; `status` is set when a response had begun (for `too_large`). */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly code: OutboundErrorCode,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/** A URL that passed the checks, with the address to connect to. */
export interface CheckedTarget {
  url: URL;
  /** Host name or IP without brackets: what Host and SNI carry. */
  hostname: string;
  port: number;
  /** Every address the name resolved to (all were checked). */
  addresses: string[];
  /** The address to connect to. */
  address: string;
  family: 4 | 6;
}

/**
 * Checks one hop: scheme, credentials, then every address the host resolves to. Throws ForbiddenTargetError for
 * what the policy refuses, OutboundError for a bad URL or a failed lookup.
 */
export async function checkTarget(target: string | URL, policy: OutboundPolicy): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new OutboundError('invalid URL', 'invalid_url');
  }
  const host = url.host;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ForbiddenTargetError(`scheme ${url.protocol} is not allowed`, host);
  }
  if (url.protocol === 'http:' && policy.allowHttp === false) {
    throw new ForbiddenTargetError(`plain http to ${host} is not allowed`, host);
  }
  if (url.username || url.password)
    throw new ForbiddenTargetError(`credentials in the URL of ${host} are not allowed`, host);
  // One name, however it is spelt: the URL parser has lowered the case and read every IPv4 form (127.1, 0x7f.1,
  // 2130706433); the root's trailing dot (`localhost.`) is dropped here, so the name is looked up as the resolver
  // and /etc/hosts know it.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const exempt = policy.allowPrivate || (policy.allowedHosts ?? []).includes(`${url.hostname}:${port}`);
  const addresses = isIP(hostname) ? [hostname] : await resolveName(hostname);
  if (!exempt) {
    const bad = addresses.find(isForbiddenAddress);
    if (bad !== undefined) {
      const how = bad === hostname ? 'is' : `resolves to ${bad}, which is`;
      throw new ForbiddenTargetError(`${host} ${how} a private, loopback, link-local or reserved address`, host);
    }
  }
  const address = addresses[0].replace(/%.*$/, '');
  return { url, hostname, port, addresses, address, family: isIP(address) === 6 ? 6 : 4 };
}

/** `localhost` and every name under it are loopback (RFC 6761 §6.3), whatever a resolver answers for them. */
const isLocalhostName = (name: string) => name === 'localhost' || name.endsWith('.localhost');

/** Every address `hostname` resolves to (a localhost name: its loopback answers, else 127.0.0.1), or OutboundError. */
async function resolveName(hostname: string): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = (await dnsLookup(hostname, { all: true, verbatim: true })).map((r) => r.address);
  } catch (err) {
    if (isLocalhostName(hostname)) return ['127.0.0.1'];
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new OutboundError(`cannot resolve ${hostname}: ${code}`, 'dns', undefined, { cause: err });
  }
  if (isLocalhostName(hostname)) {
    const loopback = addresses.filter((a) => a === '::1' || a.startsWith('127.'));
    return loopback.length ? loopback : ['127.0.0.1'];
  }
  if (!addresses.length) throw new OutboundError(`cannot resolve ${hostname}: no address`, 'dns');
  return addresses;
}

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

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin, as browsers do. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-callback-token', 'x-api-key']);

/** Fetches `url` within `policy`; see the module comment. Throws ForbiddenTargetError or OutboundError. */
export async function guardedFetch(
  url: string,
  init: GuardedFetchInit,
  policy: OutboundPolicy,
): Promise<GuardedResponse> {
  const { timeoutMs = 30_000, maxRedirects = 5, maxBytes = 10 * 1024 * 1024 } = init;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const timeout = () => new OutboundError(`timeout after ${timeoutMs} ms`, 'timeout');
  const hop: Hop = { method: (init.method ?? 'GET').toUpperCase(), headers: { ...init.headers }, body: init.body };
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const target = await raceAbort(checkTarget(current, policy), abort.signal, timeout);
      const res = await send(target, hop, abort.signal, timeout);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || !location || init.redirect === 'manual') {
        const body = await readBody(res, maxBytes, abort.signal, timeout);
        return { status, headers: res.headers, body, url: target.url.href };
      }
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

function send(t: CheckedTarget, hop: Hop, signal: AbortSignal, timeout: () => Error): Promise<IncomingMessage> {
  // Connect to the address that was checked, whatever the name resolves to by now; Host and SNI keep the name.
  const lookup = ((_name: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: t.address, family: t.family }]);
    else cb(null, t.address, t.family);
  }) as unknown as LookupFunction;
  const headers = omit(hop.headers, (k) => k === 'content-length' || k === 'host');
  if (hop.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(hop.body));
  const path = `${t.url.pathname}${t.url.search}`;
  const client = t.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // agent: false, so no pooled socket opened under another check or policy is reused.
    const options = {
      hostname: t.hostname,
      port: t.port,
      path,
      method: hop.method,
      headers,
      lookup,
      agent: false,
      signal,
    };
    const req = client.request(options, resolve);
    req.on('error', (err) => {
      if (signal.aborted) reject(timeout());
      else reject(new OutboundError(`${t.url.host}: ${err.message}`, 'network', undefined, { cause: err }));
    });
    req.end(hop.body);
  });
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
