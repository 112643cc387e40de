import type { Context, Next } from 'koa';
import {
  enableProcessMetrics,
  METRICS_CONTENT_TYPE,
  metricsText,
  observeHttpRequest,
} from '../../core/runtime/metrics';

/** The path Prometheus scrapes; outside `/api`, with the API's authentication unless `METRICS_PUBLIC=true`. */
export const METRICS_PATH = '/metrics';

/** The label of a request no route answered (an unknown path or method): never the raw path. */
const UNMATCHED = 'unmatched';

/**
 * First in the chain (before the edge middleware, so it sees the status the error envelope got): observes every
 * request into `docproc_http_request_duration_seconds` by method, route pattern (`/api/jobs/:job_id`) and status.
 * A request refused before routing (401) still gets its route's pattern from `routeOf`. Streaming answers (SSE,
 * downloads) are timed until their handler answered, not until the last byte.
 */
export function httpMetrics(routeOf: (method: string, path: string) => string | RegExp | undefined) {
  return async function metrics(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
      const route =
        ctx.path === METRICS_PATH
          ? METRICS_PATH
          : matched !== undefined
            ? String(matched)
            : String(routeOf(ctx.method, ctx.path) ?? UNMATCHED);
      observeHttpRequest(ctx.method, route, ctx.status, (performance.now() - started) / 1000);
    }
  };
}

/** `GET /metrics`: this process's metrics in the Prometheus text format. After authentication. */
export function metricsEndpoint() {
  enableProcessMetrics();
  return async function metricsRoute(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== METRICS_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await metricsText();
  };
}
