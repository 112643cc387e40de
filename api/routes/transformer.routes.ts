import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { refineGrounding } from '../../core/jobs/job-fields';
import type { TransformerParams } from '../../core/jobs/job-params';
import { transformerResultData } from '../../core/results/result-schemas-text';
import { loadTemplate, needsModel, parseTemplate, TEMPLATES_DIR } from '../../core/templates';
import { envelope, errorResponse, z } from '../openapi';
import type { ApiRouter } from '../api-router';
import { lang, useCache } from '../schemas/common.schemas';
import type { ApiEngines } from '../engines';
import { answerDirectly } from '../services/direct-answer';
import type { JobService } from '../services/jobs';
import { answerSync } from '../services/sync-answer';

const MAX_TEXT = 1_000_000;
const MAX_HTML = 10_000_000;
const text = z.string().max(MAX_TEXT, `at most ${MAX_TEXT} characters`);
const htmlBody = z.object({ html: z.string().max(MAX_HTML, `at most ${MAX_HTML} characters`), use_cache: useCache });

export const templateBody = z
  .object({
    text,
    template: z.string().min(1).max(100).optional(),
    template_content: z.string().min(1).max(100_000).optional(),
    additional_field_descriptions: z.record(z.string(), z.string().max(2000)).optional(),
    source_language: lang.optional(),
    target_language: lang.optional(),
    context: z.record(z.string(), z.unknown()).optional().default({}),
    grounding: z
      .boolean()
      .optional()
      .openapi({
        description:
          'Each value checked against the text: `data.template_sources` says where it stands, a value the text does ' +
          'not hold is emptied and named in `data.unsupported_fields` (contract §14). Values stay in the text’s language',
      }),
    use_cache: useCache,
  })
  .refine((b) => (b.template === undefined) !== (b.template_content === undefined), {
    message: 'give exactly one of template and template_content',
    path: ['template'],
  })
  .superRefine((b, ctx) => refineGrounding(b, ctx, { translatesValues: true }));

export interface TransformerDeps {
  jobs: JobService;
  config: Config;
  syncWaitMs: number;
  /** The worker threads small HTML operations run in (api/engines.ts). */
  engines: Pick<ApiEngines, 'transformHtml'>;
}

/**
 * Runs one transformer operation the way every endpoint here does: answered by the API itself when it can (a cache
 * hit, a small HTML operation: services/direct-answer.ts), else as a job of the transformer type, waited for, its
 * results forwarded as `data`. The pipeline reads the result cache (unless `use_cache` is false) and writes fresh
 * results to it; `X-Cache` says which it was. `needsModel` operations answer 503 when no model is configured.
 * `templateSource` is the template's text (the cache key holds it).
 */
export async function runTransformerOperation(
  ctx: Context,
  deps: TransformerDeps,
  params: TransformerParams,
  opts: { needsModel: boolean; templateSource?: string },
): Promise<void> {
  if (opts.needsModel && !deps.config.llm) {
    throw new AppError(
      'PROVIDER_NOT_CONFIGURED',
      'This operation needs a language model: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.',
      {
        operation: params.operation,
      },
    );
  }
  if (await answerDirectly(ctx, deps, params, { templateSource: opts.templateSource })) return;
  await answerSync(ctx, deps.jobs, { jobType: 'transformer', parameters: params }, deps.syncWaitMs);
}

const json = <T extends z.ZodType>(schema: T, description = 'Result') => ({
  description,
  content: { 'application/json': { schema: envelope(schema) } },
});
export const modelErrors = {
  502: errorResponse('The language model failed'),
  503: errorResponse('No language model configured'),
  504: errorResponse('Still running; poll details.job_id'),
};

/** The transformer endpoints (spec §4.3): each runs the transformer job type's pipeline through the same code. */
export function transformerRoutes(api: ApiRouter, deps: TransformerDeps): void {
  const tags = ['Transformer'];

  api.add({
    method: 'post',
    path: '/api/transformer/text',
    summary: 'Translate a text',
    tags,
    description: 'No model is called when source and target language are the same.',
    body: z.object({
      text,
      source_language: lang.optional().default(JOB_DEFAULTS.transformer.source_language),
      target_language: lang.optional().default(JOB_DEFAULTS.transformer.target_language),
      use_cache: useCache,
    }),
    responses: {
      200: json(transformerResultData.text),
      ...modelErrors,
    },
    handler: async (ctx, { body }) => {
      const params = { operation: 'text' as const, ...body };
      await runTransformerOperation(ctx, deps, params, { needsModel: body.source_language !== body.target_language });
    },
  });

  api.add({
    method: 'post',
    path: '/api/transformer/template',
    summary: 'Fill a template from a text',
    tags,
    description:
      'A named template (`GET /api/transformer/templates`) or inline `template_content`; fields are filled by the ' +
      'model, context values directly. A template without fields calls no model.',
    body: templateBody,
    responses: {
      200: json(transformerResultData.template),
      404: errorResponse('Unknown template'),
      ...modelErrors,
    },
    handler: async (ctx, { body }) => {
      let source = body.template_content;
      if (source === undefined) {
        const t = await loadTemplate(TEMPLATES_DIR, body.template!, body.target_language);
        if (!t)
          throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(body.template)}.`, {
            template: body.template,
          });
        source = t.source;
      }
      const params = { operation: 'template' as const, ...body };
      await runTransformerOperation(ctx, deps, params, {
        needsModel: needsModel(parseTemplate(source), body.context),
        templateSource: source,
      });
    },
  });

  api.add({
    method: 'post',
    path: '/api/transformer/summarize',
    summary: 'Summarise a text',
    tags,
    description: 'At most `max_length` characters. Long texts are summarised in chunks, then the chunk summaries.',
    body: z.object({
      text: text.min(1),
      max_length: z.number().int().min(50).max(100_000).optional().default(1000),
      use_cache: useCache,
    }),
    responses: { 200: json(transformerResultData.summarize), ...modelErrors },
    handler: async (ctx, { body }) => {
      await runTransformerOperation(ctx, deps, { operation: 'summarize', ...body }, { needsModel: true });
    },
  });

  api.add({
    method: 'post',
    path: '/api/transformer/html-to-markdown',
    summary: 'Convert HTML to Markdown',
    tags,
    description: 'GitHub-flavoured Markdown; tables with colspan/rowspan come out rectangular.',
    body: htmlBody,
    responses: {
      200: json(transformerResultData['html-to-markdown']),
      422: errorResponse('HTML nested too deeply'),
      504: modelErrors[504],
    },
    handler: async (ctx, { body }) => {
      await runTransformerOperation(ctx, deps, { operation: 'html-to-markdown', ...body }, { needsModel: false });
    },
  });

  api.add({
    method: 'post',
    path: '/api/transformer/extract-tables',
    summary: 'Extract the tables of an HTML document',
    tags,
    description: 'Each table as headers and rows; colspan and rowspan are expanded.',
    body: htmlBody,
    responses: {
      200: json(transformerResultData['extract-tables']),
      422: errorResponse('HTML nested too deeply'),
      504: modelErrors[504],
    },
    handler: async (ctx, { body }) => {
      await runTransformerOperation(ctx, deps, { operation: 'extract-tables', ...body }, { needsModel: false });
    },
  });
}
