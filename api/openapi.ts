import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };

/** Security schemes of contract §2: a bare key in `X-Service-Api-Key`, or the same key as a Bearer token. */
export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Api-Key',
    description: 'The bare API key (SERVICE_API_KEY).',
  });
  registry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'The API key as a Bearer token.',
  });
  return registry;
}

export function generateDocument(registry: OpenAPIRegistry, version: string): Record<string, unknown> {
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Document and Media Processing Service',
      version,
      description:
        'PDF text extraction, OCR, transcription, translation, templates, HTML tools, sessions and an asynchronous ' +
        'job system on Temporal. Every endpoint needs an API key unless marked otherwise.',
    },
    servers: [{ url: '/' }],
    security: [{ ApiKeyHeader: [] }, { BearerAuth: [] }],
  });
  return doc as unknown as Record<string, unknown>;
}

const errorBody = z
  .object({
    status: z.literal('error'),
    error: z.object({
      code: z.string().openapi({ example: 'VALIDATION_ERROR' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi('Error');

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorBody } },
});

/** Wraps a data schema in the success envelope. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ status: z.literal('success'), data });

/** A JSON success response: the data schema in the envelope. */
export const jsonResponse = <T extends z.ZodType>(data: T, description: string) => ({
  description,
  content: { 'application/json': { schema: envelope(data) } },
});
