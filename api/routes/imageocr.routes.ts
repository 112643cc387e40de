import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { checkPixelBudget } from '../../core/jobs/input-budgets';
import type { ImageOcrParams } from '../../core/jobs/job-params';
import { outputFormat } from '../../core/jobs/job-params-media';
import { imageOcrResultData } from '../../core/results/result-schemas-media';
import { envelope, errorResponse, z } from '../openapi';
import type { ApiEngines } from '../engines';
import type { ApiRouter } from '../api-router';
import { formBool } from '../schemas/form';
import { chunkingOptions } from '../schemas/chunks.schemas';
import { jobBodyParameters } from '../schemas/job-body';
import type { JobService } from '../services/jobs';
import { answerImageFromCache } from '../services/direct-answer';
import { answerSync } from '../services/sync-answer';
import { storeUpload, uploadedFile, withUpload } from '../uploads';

/**
 * The options the two routes share: the imageocr job's parameters of these names (`jobBodyParameters`); the pipeline
 * reads the result cache unless `use_cache` is false.
 */
const common = {
  template: z.string().max(200).optional(),
  use_cache: formBool(true),
  ocr_language: z.string().max(100).optional(),
  output_format: outputFormat.optional(),
  ...chunkingOptions,
};
/** The imageocr job's result (core/results/result-schemas-media.ts). */
const result = envelope(imageOcrResultData);

/** Image OCR (spec §4.10): an upload or a URL (SSRF-guarded), recognised by tesseract on the media queue. */
export function imageOcrRoutes(
  api: ApiRouter,
  jobs: JobService,
  config: Config,
  engines: Pick<ApiEngines, 'imageSize'>,
): void {
  const tags = ['Image OCR'];
  const answer = async (ctx: Context, parameters: ImageOcrParams) =>
    answerSync(ctx, jobs, { jobType: 'imageocr', parameters }, config.SYNC_WAIT_MS);
  const responses = {
    200: { description: 'The text', content: { 'application/json': { schema: result } } },
    400: errorResponse('Not a supported image'),
    422: errorResponse('The image cannot be decoded, or has more pixels than MAX_IMAGE_PIXELS'),
    504: errorResponse('Still running; poll details.job_id'),
  };

  api.add({
    method: 'post',
    path: '/api/imageocr/process',
    summary: 'Recognise the text of an image',
    tags,
    body: z.object({ file: uploadedFile, ...common }),
    bodyTypes: ['multipart'],
    responses,
    handler: async (ctx, { body }) => {
      if (body.file.size === 0) throw new AppError('INVALID_FORMAT', 'The file is empty.', { error_type: 'empty' });
      // A decompression bomb is refused from its header, before a job exists (the worker checks again).
      const head = await engines.imageSize(body.file.filepath);
      if (head) checkPixelBudget(head, config.MAX_IMAGE_PIXELS);
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = { file_key: upload.key, file_sha256: upload.sha256, ...jobBodyParameters('imageocr', body) };
      await withUpload(jobs, upload, async () => {
        // A cache hit is answered without a job (issue 24); no job took the upload, so it is removed.
        if (await answerImageFromCache(ctx, { jobs, config }, upload.sha256, parameters)) return;
        await answer(ctx, parameters);
      });
    },
  });

  api.add({
    method: 'post',
    path: '/api/imageocr/process-url',
    summary: 'Recognise the text of an image at a URL',
    tags,
    description:
      'Private, loopback, link-local and metadata addresses are refused (also after DNS and redirects) unless ' +
      'ALLOW_PRIVATE_URLS=true (npm start sets it when its API listens on loopback only).',
    body: z.object({
      url: z
        .string()
        .url()
        .max(4096)
        .refine((u) => /^https?:\/\//i.test(u), 'an http or https URL'),
      ...common,
    }),
    bodyTypes: ['json', 'multipart'],
    responses: {
      ...responses,
      403: errorResponse('Target not allowed'),
      502: errorResponse('The URL could not be fetched'),
    },
    handler: async (ctx, { body }) => {
      await answer(ctx, jobBodyParameters('imageocr', body));
    },
  });
}
