import type { ApiRouter } from '../route';
import { healthBody, healthQuery, liveBody } from '../schemas/health.schemas';
import type { HealthService } from '../services/health';

export function healthRoutes(api: ApiRouter, health: HealthService): void {
  api.add({
    method: 'get',
    path: '/api/health',
    summary: 'Service health',
    description:
      'Checks Temporal, storage and the workers. 503 when Temporal or storage is unreachable. `probe=workflow` also ' +
      'runs a workflow through both task queues and reports its round trip.',
    tags: ['Health'],
    auth: false,
    query: healthQuery,
    responses: {
      200: { description: 'Healthy or degraded', content: { 'application/json': { schema: healthBody } } },
      503: { description: 'Temporal or storage unreachable', content: { 'application/json': { schema: healthBody } } },
    },
    handler: async (ctx, { query }) => {
      const report = await health.report({ probe: query.probe === 'workflow' });
      ctx.status = report.status === 'unavailable' ? 503 : 200;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = report;
    },
  });
  api.add({
    method: 'get',
    path: '/api/health/live',
    summary: 'Liveness',
    description: '200 while the API process runs.',
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
