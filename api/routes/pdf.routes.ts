import { AppError } from '../../core/errors';
import { assertInsideInputRoots } from '../../core/input-roots';
import { DISCARD_UPLOAD, refinePageRange } from '../../core/job-params';
import { envelope, errorResponse, jsonResponse, z } from '../openapi';
import type { ApiRouter } from '../route';
import { formBool, formInt } from '../schemas/form';
import { jobAccepted, webhookSchema } from '../schemas/jobs.schemas';
import type { JobService } from '../services/jobs';
import { answerWithResults } from '../services/sync-answer';
import { storeUpload, uploadedFile, withUpload } from '../uploads';
import { validateParameters } from './jobs.routes';

const METHODS = ['native', 'local_ocr', 'vision_llm', 'combined'] as const;

const processBody = z
  .object({
    file: uploadedFile,
    extraction_method: z.enum(METHODS).optional().default('native'),
    template: z.string().max(200).optional(),
    context: z.preprocess((v) => {
      if (v === undefined || v === '') return {};
      try {
        return typeof v === 'string' ? JSON.parse(v) : v;
      } catch {
        return v;
      }
    }, z.record(z.string(), z.unknown())),
    useCache: formBool(true),
    includeImages: formBool(false),
    page_start: formInt(1, 100_000),
    page_end: formInt(1, 100_000),
    source_language: z.string().regex(/^[a-z]{2}$/).optional(),
    ocr_language: z.string().max(100).optional(),
  })
  .superRefine(refinePageRange);

const jobBody = z.object({
  filename: z.string().min(1).max(4096),
  extraction_method: z.enum(METHODS).optional(),
  template: z.string().max(200).optional(),
  use_cache: z.boolean().optional(),
  page_start: z.number().int().min(1).optional(),
  page_end: z.number().int().min(1).optional(),
  webhook: webhookSchema.optional(),
});

const textContent = z.object({ page: z.number().int(), text: z.string(), method: z.string() });

/** PDF extraction (spec §4.2): synchronous processing of an upload, and jobs for files inside INPUT_ROOTS. */
export interface PdfRouteOptions {
  syncWaitMs: number;
  llmConfigured: boolean;
  /** Where `/api/pdf/job` may read files (config `inputRoots`). */
  inputRoots: readonly string[];
}

export function pdfRoutes(api: ApiRouter, jobs: JobService, opts: PdfRouteOptions): void {
  const { syncWaitMs, llmConfigured } = opts;
  const tags = ['PDF'];
  api.add({
    method: 'post', path: '/api/pdf/process', summary: 'Extract the text of a PDF', tags,
    description: 'Runs the pdf pipeline as a job and waits for it; past the limit, 504 with `details.job_id` and the work goes on. A repeated request for the same document, method, page range and languages is answered from the result cache (`X-Cache: hit`) unless `useCache` is false; requests with a template or page images always run.',
    body: processBody, bodyTypes: ['multipart'],
    responses: {
      200: {
        description: 'The text',
        content: {
          'application/json': {
            schema: envelope(z.object({
              extracted_text: z.string(),
              metadata: z.object({ page_count: z.number().int(), author: z.string(), title: z.string(), text_contents: z.array(textContent), image_paths: z.array(z.string()) }),
              images_archive_filename: z.string().nullable(),
              images_archive_data: z.string().nullable(),
            })),
          },
        },
      },
      422: errorResponse('Corrupt, encrypted or empty PDF'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      if (body.extraction_method === 'vision_llm' && !llmConfigured) {
        throw new AppError('PROVIDER_NOT_CONFIGURED', 'vision_llm needs a language model: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.', {});
      }
      if (body.file.size === 0) throw new AppError('UNPROCESSABLE_INPUT', 'The file is empty.', { reason: 'empty' });
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = validateParameters('pdf', {
        file_key: upload.key,
        [DISCARD_UPLOAD]: true,
        original_name: upload.originalName,
        extraction_method: body.extraction_method,
        ...(body.template ? { template: body.template } : {}),
        context: body.context,
        use_cache: body.useCache,
        includeImages: body.includeImages,
        ...(body.page_start ? { page_start: body.page_start } : {}),
        ...(body.page_end ? { page_end: body.page_end } : {}),
        ...(body.source_language ? { source_language: body.source_language } : {}),
        ...(body.ocr_language ? { ocr_language: body.ocr_language } : {}),
      });
      await withUpload(jobs.store, upload, async () => answerWithResults(ctx, await jobs.runSync({ jobType: 'pdf', parameters }, syncWaitMs)));
    },
  });

  api.add({
    method: 'post', path: '/api/pdf/job', summary: 'Start a PDF job for a file on the server', tags,
    description: '`filename` must lie inside INPUT_ROOTS, symlinks resolved: else 403 FORBIDDEN and no job. A missing file inside the roots is accepted and the job fails with FILE_NOT_FOUND. Read the job with GET /api/jobs/{job_id}.',
    body: jobBody,
    responses: { 200: jsonResponse(jobAccepted, 'Accepted'), 403: errorResponse('The file lies outside INPUT_ROOTS') },
    handler: async (ctx, { body }) => {
      const { webhook, ...rest } = body;
      const parameters = validateParameters('pdf', { ...rest, ...(webhook ? { webhook } : {}) });
      await assertInsideInputRoots(body.filename, opts.inputRoots);
      const { state } = await jobs.create({ jobType: 'pdf', parameters, webhook });
      ctx.body = { status: 'success', data: { job_id: state.job_id, status: state.status } };
    },
  });
}
