import type { Context, Next } from 'koa';
import type { Logger } from '../../core/runtime/logger';
import { newRequestId } from '../../core/jobs/ids';
import { toApiError } from '../errors';
import { JobAccepted } from '../services/async-preference';

const CLIENT_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/**
 * First in the chain: assigns the request id, the version header and the per-request logger, and is the only
 * writer of error bodies. Stack traces go to the log with the request id, never to the client.
 */
export function edgeMiddleware(logger: Logger, version: string) {
  return async function edge(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = CLIENT_ID.test(incoming) ? incoming : newRequestId();
    ctx.state.requestId = requestId;
    const log = logger.child({ requestId });
    ctx.state.log = log;
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Service-Version', version);
    try {
      await next();
      if (ctx.body === undefined && (ctx.status === 404 || ctx.status === 405 || ctx.status === 501)) {
        // No route answered. The router's allowedMethods left 405 (known path, other method) or 501 (a method no
        // route uses) with an Allow header: both become a 405 envelope that keeps Allow, or 404 for an unknown path.
        const allow = ctx.response.get('Allow');
        const status = ctx.status !== 404 && allow ? 405 : 404;
        throw Object.assign(new Error('no route'), { status, headers: { Allow: allow } });
      }
    } catch (err) {
      if (err instanceof JobAccepted) {
        // Not a failure: the job was accepted and the client does not wait for it (contract §3).
        ctx.status = 202;
        ctx.set('Location', `/api/jobs/${err.state.job_id}`);
        if (err.preferenceApplied) ctx.set('Preference-Applied', 'respond-async');
        ctx.body = {
          status: 'success',
          data: {
            job_id: err.state.job_id,
            status: err.state.status,
            message: `Accepted; poll GET /api/jobs/${err.state.job_id}.`,
          },
        };
        return;
      }
      const mapped = toApiError(err);
      if (mapped.unexpected) log.error({ err }, 'request failed');
      else log.debug({ code: mapped.body.code }, 'request rejected');
      for (const h of ['Content-Disposition', 'Content-Length', 'Content-Encoding', 'Cache-Control', 'Allow'])
        ctx.remove(h);
      ctx.status = mapped.status;
      ctx.type = 'application/json';
      ctx.body = { status: 'error', error: mapped.body };
      // An upload refused as too large before its body was read to the end: the connection cannot carry another
      // request, so the client is told not to reuse it (else its next request meets a reset). Other early answers
      // (a 401 to an upload) leave the connection to Node, which reads the rest of the body so the client gets them.
      if (!ctx.req.complete && mapped.status === 413) ctx.set('Connection', 'close');
      // Temporal unreachable (api/temporal.ts): the probe looks again every half second, so a client may retry soon.
      if (mapped.body.code === 'UNAVAILABLE' && mapped.body.details?.reason === 'temporal_unreachable')
        ctx.set('Retry-After', '1');
      if (mapped.status === 405) {
        const allow = (err as { headers?: Record<string, string> }).headers?.Allow;
        if (allow) ctx.set('Allow', allow);
      }
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
