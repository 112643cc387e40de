import { AppError } from '../../core/errors';
import { fieldDescriptions, listTemplates, loadTemplate, parseTemplate, TEMPLATES_DIR } from '../../core/templates';
import { errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { templateDetail, templateList, templateNameParam, templateQuery } from '../schemas/templates.schemas';

/** The set of available templates (contract §5): names, languages, and each one's content and fields. */
export function templateRoutes(api: ApiRouter, dir = TEMPLATES_DIR): void {
  api.add({
    method: 'get',
    path: '/api/transformer/templates',
    summary: 'List the available templates',
    tags: ['Transformer'],
    responses: { 200: jsonResponse(templateList, 'Templates') },
    handler: async (ctx) => {
      const templates = (await listTemplates(dir)).map((t) => ({
        name: t.name,
        languages: t.languages,
        ...(t.title ? { title: t.title } : {}),
        ...(t.description ? { description: t.description } : {}),
      }));
      ctx.body = { status: 'success', data: { templates } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/transformer/templates/{name}',
    summary: 'Show a template',
    description: 'With `language`, the `<Name>_<language>` variant is preferred when it exists.',
    tags: ['Transformer'],
    params: templateNameParam,
    query: templateQuery,
    responses: { 200: jsonResponse(templateDetail, 'The template'), 404: errorResponse('Unknown template') },
    handler: async (ctx, { params, query }) => {
      const t = await loadTemplate(dir, params.name, query.language);
      if (!t)
        throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(params.name)}.`, {
          template: params.name,
        });
      const parsed = parseTemplate(t.source);
      const descriptions = fieldDescriptions(parsed);
      ctx.body = {
        status: 'success',
        data: {
          name: t.name,
          language: t.language ?? null,
          content: t.source,
          fields: parsed.fields.map((f) => ({ name: f.name, description: descriptions[f.name] ?? f.name })),
          has_system_prompt: parsed.systemPrompt !== null,
        },
      };
    },
  });
}
