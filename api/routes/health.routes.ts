import type { ApiRouter } from '../api-router';
import { healthBody, healthQuery, liveBody } from '../schemas/health.schemas';
import type { HealthService } from '../services/health';

/** `draining`: the process is shutting down (api/drain.ts), so readiness answers 503 whatever the checks say. */
export function healthRoutes(api: ApiRouter, health: HealthService, draining: () => boolean = () => false): void {
  api.add({
    method: 'get',
    path: '/api/health',
    summary: 'Service health',
    description:
      'Readiness. Checks Temporal, storage and the workers. 503 when Temporal or storage is unreachable, or while the ' +
      'process shuts down (in-flight requests finishing). `probe=workflow` also runs a workflow through both task ' +
      'queues and reports its round trip.',
    tags: ['Health'],
    auth: false,
    query: healthQuery,
    responses: {
      200: { description: 'Healthy or degraded', content: { 'application/json': { schema: healthBody } } },
      503: {
        description: 'Temporal or storage unreachable, or shutting down',
        content: { 'application/json': { schema: healthBody } },
      },
    },
    handler: async (ctx, { query }) => {
      const report = await health.report({ probe: query.probe === 'workflow' });
      if (draining()) report.status = 'unavailable';
      ctx.status = report.status === 'unavailable' ? 503 : 200;
      ctx.set('Cache-Control', 'no-store');
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
