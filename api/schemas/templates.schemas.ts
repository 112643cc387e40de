import { z } from '../openapi';

export const templateSummary = z
  .object({
    name: z.string(),
    languages: z.array(z.string()),
    title: z.string().optional(),
    description: z.string().optional(),
  })
  .openapi('TemplateSummary');

export const templateDetail = z
  .object({
    name: z.string(),
    language: z.string().nullable(),
    content: z.string(),
    fields: z.array(z.object({ name: z.string(), description: z.string() })),
    has_system_prompt: z.boolean(),
  })
  .openapi('Template');

export const templateList = z.object({ templates: z.array(templateSummary) });

export const templateNameParam = z.object({ name: z.string() });

export const templateQuery = z.object({
  language: z
    .string()
    .regex(/^[a-z]{2}(-[A-Za-z]{2})?$/)
    .optional(),
});
