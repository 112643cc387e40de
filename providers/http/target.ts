import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isForbiddenAddress } from './address-classifier';

/**
 * The address rules of outbound HTTP (contract §2): what a policy allows, and the check of one hop (scheme,
 * credentials, every address the host resolves to). ssrf.ts re-exports all of it; guarded-stream.ts sends to the
 * address checked here.
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
