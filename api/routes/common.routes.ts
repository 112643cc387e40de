import type { ApiRouter } from '../route';
import { z } from '../openapi';
import { SERVICE_VERSION } from '../../core/version';

export function commonRoutes(api: ApiRouter): void {
  api.add({
    method: 'get',
    path: '/api/common/',
    summary: 'Home',
    description: 'A plain object with a message (no envelope).',
    tags: ['Common'],
    responses: {
      200: {
        description: 'Welcome message',
        content: { 'application/json': { schema: z.object({ message: z.string(), version: z.string(), docs: z.string() }) } },
      },
    },
    handler: (ctx) => {
      ctx.body = {
        message: 'Document and Media Processing Service. See /api/doc for the API.',
        version: SERVICE_VERSION,
        docs: '/api/doc',
      };
    },
  });
}
