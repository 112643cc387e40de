import type http from 'node:http';
import type { Context, Next } from 'koa';
import { AppError } from '../core/errors';

/** Paths still answered while draining: liveness (the process runs) and readiness (which then says 503). */
const HEALTH_PATHS = new Set(['/api/health/live', '/api/health']);

/**
 * Graceful shutdown of the API (SIGTERM). Once {@link Drain.start} is called the server accepts no new
 * connections; a request arriving on a kept-alive connection is refused with 503 `UNAVAILABLE`
 * (`details.reason: shutting_down`, `Retry-After: 1`, `Connection: close`) so the client retries on another replica;
 * `/api/health` (readiness) answers 503 so a load balancer takes the replica out; requests already running finish,
 * each closing its connection, and the process exits when the last connection is gone or after the timeout.
 */
export class Drain {
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  /** Koa middleware, after the edge middleware (which writes the error envelope). */
  readonly middleware = async (ctx: Context, next: Next): Promise<void> => {
    if (this.draining) {
      ctx.set('Connection', 'close');
      if (!HEALTH_PATHS.has(ctx.path)) {
        ctx.set('Retry-After', '1');
        throw new AppError('UNAVAILABLE', 'The server is shutting down; retry the request', {
          reason: 'shutting_down',
        });
      }
    }
    await next();
    // A request that was running when the drain began closes its connection with its answer.
    if (this.draining && !ctx.headerSent) ctx.set('Connection', 'close');
  };

  /**
   * Stops accepting connections and resolves once every connection has closed (in-flight requests answered), or
   * after `timeoutMs`, when the remaining connections are cut. Resolves to true when everything finished in time.
   */
  start(server: http.Server, timeoutMs: number): Promise<boolean> {
    this.draining = true;
    return new Promise<boolean>((resolve) => {
      // Connections that went idle after their last answer (kept alive) are closed as they appear.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const timer = setTimeout(() => {
        clearInterval(sweep);
        server.closeAllConnections();
        resolve(false);
      }, timeoutMs);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(timer);
        resolve(true);
      });
      server.closeIdleConnections();
    });
  }
}
