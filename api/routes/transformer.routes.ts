import type { ExtractedTable } from '../../core/html/tables';
import { envelope, z } from '../openapi';
import type { ApiRouter } from '../route';
import type { JobService } from '../services/jobs';

const MAX_HTML = 10_000_000;
const htmlBody = z.object({
  html: z.string().max(MAX_HTML, `at most ${MAX_HTML} characters`),
  use_cache: z.boolean().optional().default(true),
});
const table = z.object({ headers: z.array(z.string()), rows: z.array(z.array(z.string())) }).openapi('ExtractedTable');

/**
 * The transformer endpoints run the transformer job type's pipeline as a job and wait for it (architecture.md:
 * synchronous endpoints run the same workflows), so the API's event loop never does the conversion itself.
 */
export function transformerRoutes(api: ApiRouter, jobs: JobService, syncWaitMs: number): void {
  api.add({
    method: 'post',
    path: '/api/transformer/html-to-markdown',
    summary: 'Convert HTML to Markdown',
    description: 'GitHub-flavoured Markdown; tables with colspan/rowspan come out rectangular.',
    tags: ['Transformer'],
    body: htmlBody,
    responses: {
      200: { description: 'Markdown', content: { 'application/json': { schema: envelope(z.object({ html: z.string(), markdown: z.string() })) } } },
    },
    handler: async (ctx, { body }) => {
      const done = await jobs.runSync({ jobType: 'transformer', parameters: { operation: 'html-to-markdown', html: body.html, use_cache: body.use_cache } }, syncWaitMs);
      const sd = (done.results?.structured_data ?? {}) as { extracted_text?: string };
      ctx.body = { status: 'success', data: { html: body.html, markdown: sd.extracted_text ?? '' } };
    },
  });

  api.add({
    method: 'post',
    path: '/api/transformer/extract-tables',
    summary: 'Extract the tables of an HTML document',
    description: 'Each table as headers and rows; colspan and rowspan are expanded.',
    tags: ['Transformer'],
    body: htmlBody,
    responses: { 200: { description: 'Tables', content: { 'application/json': { schema: envelope(z.object({ tables: z.array(table) })) } } } },
    handler: async (ctx, { body }) => {
      const done = await jobs.runSync({ jobType: 'transformer', parameters: { operation: 'extract-tables', html: body.html, use_cache: body.use_cache } }, syncWaitMs);
      const sd = (done.results?.structured_data ?? {}) as { metadata?: { tables?: ExtractedTable[] } };
      ctx.body = { status: 'success', data: { tables: sd.metadata?.tables ?? [] } };
    },
  });
}
