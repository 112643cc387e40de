import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { AppError } from '../../core/errors';
import { compileAllowList, isLoopbackIp } from '../net';

export interface AuthOptions {
  apiKey?: string;
  allowLocalhostNoAuth: boolean;
  docWhitelist: string[];
  /** Exact paths that need no key (health, OpenAPI, docs UI and its assets). */
  isExemptPath: (path: string) => boolean;
  /** Exact paths of the docs UI: with a whitelist, only whitelisted clients open them without a key. */
  isDocPath: (path: string) => boolean;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison: both sides are hashed first so their lengths never leak either. */
export function keyMatches(candidate: string | undefined, expected: Buffer): boolean {
  if (candidate === undefined) return false;
  return timingSafeEqual(digest(candidate), expected);
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  return m ? m[1].trim() : undefined;
}

/** Whether the auth middleware let the caller through on its own right (a key, or loopback where that suffices). */
export function isAuthorized(ctx: Context): boolean {
  return (ctx.state as { authorized?: boolean }).authorized === true;
}

/**
 * Contract §2. The socket address is the only source of the client address: `Host`, `X-Forwarded-For` and
 * the like are never consulted. Every request is marked `authorized` (`isAuthorized`) when it would pass without
 * the exemptions: exempt paths (health) answer such callers more than anonymous ones.
 */
export function authMiddleware(opts: AuthOptions) {
  const expected = opts.apiKey ? digest(opts.apiKey) : undefined;
  const whitelisted = compileAllowList(opts.docWhitelist);
  const authorizes = (ctx: Context, ip: string | undefined): boolean => {
    // No key configured: the server listens on loopback only and serves loopback clients.
    if (!expected) return isLoopbackIp(ip);
    if (opts.allowLocalhostNoAuth && isLoopbackIp(ip)) return true;
    const h = ctx.headers;
    const viaBearer = keyMatches(bearer(h.authorization), expected);
    const viaHeader = keyMatches(
      typeof h['x-service-api-key'] === 'string' ? h['x-service-api-key'] : undefined,
      expected,
    );
    return viaBearer || viaHeader;
  };
  return async function auth(ctx: Context, next: Next): Promise<void> {
    const ip = ctx.req.socket.remoteAddress;
    const path = ctx.path;
    const authorized = authorizes(ctx, ip);
    (ctx.state as { authorized?: boolean }).authorized = authorized;
    const isDoc = opts.isDocPath(path);
    if (isDoc && opts.docWhitelist.length > 0) {
      if (whitelisted(ip)) return next();
    } else if (opts.isExemptPath(path)) {
      return next();
    }
    if (authorized) return next();
    if (!expected) throw new AppError('UNAUTHORIZED', 'This server accepts loopback clients only.');
    ctx.set('WWW-Authenticate', 'Bearer');
    throw new AppError(
      'UNAUTHORIZED',
      'A valid API key is required (Authorization: Bearer <key> or X-Service-Api-Key).',
    );
  };
}
