import type { ApiRouter } from '../api-router';
import { isAuthorized } from '../middleware/auth';
import { healthAnswer, healthQuery, liveBody } from '../schemas/health.schemas';
import type { HealthService } from '../services/health';

/** `draining`: the process is shutting down (api/drain.ts), so readiness answers 503 whatever the checks say. */
export function healthRoutes(api: ApiRouter, health: HealthService, draining: () => boolean = () => false): void {
  api.add({
    method: 'get',
    path: '/api/health',
    summary: 'Service health',
    description:
      'Readiness. Checks Temporal, storage and the workers. 503 when Temporal or storage is unreachable, or while the ' +
      'process shuts down (in-flight requests finishing). Without the API key (contract §11) the answer is the status ' +
      'alone (`HealthStatus`), from the last probe (Temporal: the reachability probe of every second; the rest: a ' +
      'report cached for a few seconds), so an anonymous caller causes no I/O; with the key (or where the server lets ' +
      'the caller through without one, e.g. loopback with `ALLOW_LOCALHOST_NO_AUTH`), the whole report (`Health`), ' +
      'checked live, and `probe=workflow` also runs a workflow through both task queues and reports its round trip ' +
      '(ignored without the key).',
    tags: ['Health'],
    auth: false,
    query: healthQuery,
    responses: {
      200: {
        description: 'Healthy or degraded: the whole report with the key, the status alone without it',
        content: { 'application/json': { schema: healthAnswer } },
      },
      503: {
        description: 'Temporal or storage unreachable, or shutting down',
        content: { 'application/json': { schema: healthAnswer } },
      },
    },
    handler: async (ctx, { query }) => {
      ctx.set('Cache-Control', 'no-store');
      if (!isAuthorized(ctx)) {
        const status = draining() ? 'unavailable' : await health.status();
        ctx.status = status === 'unavailable' ? 503 : 200;
        ctx.body = { status };
        return;
      }
      const live = await health.report({ probe: query.probe === 'workflow' });
      const report = draining() ? { ...live, status: 'unavailable' as const } : live;
      ctx.status = report.status === 'unavailable' ? 503 : 200;
      ctx.body = report;
    },
  });
  api.add({
    method: 'get',
    path: '/api/health/live',
    summary: 'Liveness',
    description: '200 while the API process runs, also while it shuts down (liveness: cheap, checks nothing else).',
    tags: ['Health'],
    auth: false,
    responses: {
      200: { description: 'Alive', content: { 'application/json': { schema: liveBody } } },
    },
    handler: (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'ok', timestamp: new Date().toISOString() };
    },
  });
}
