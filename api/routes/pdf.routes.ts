import fs from 'node:fs/promises';
import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { assertInsideInputRoots } from '../../core/jobs/input-roots';
import { pageRange } from '../../core/jobs/page-range';
import { jobOutputKey } from '../../core/stores/records';
import type { JobState } from '../../workflows/definitions';
import { isTerminal } from '../../workflows/job-state';
import { errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { jobAccepted, jobIdParam, jobInProgress, zipResponse } from '../schemas/jobs.schemas';
import { externalOcrBody, externalOcrResult, jobBody, pdfProcessResult, processBody } from '../schemas/pdf.schemas';
import { attachment } from '../services/archive';
import { answerPdfFromCache } from '../services/direct-answer';
import { answerPdfDirectly, mayAnswerPdfDirectly } from '../services/direct-pdf';
import type { ApiEngines } from '../engines';
import { jobErrorToAppError } from '../services/job-starts';
import type { JobService } from '../services/jobs';
import { answerSync, answerWithResults } from '../services/sync-answer';
import { storeUpload, uploadInput, withUpload } from '../uploads';
import { validateBodyParameters } from '../services/job-intake';
import { jobBodyParameters } from '../schemas/job-body';

/** True when the first KiB of the file holds `%PDF-` (the same test the PDF reader applies). */
async function hasPdfHeader(file: string): Promise<boolean> {
  const fh = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(1024), 0, 1024, 0);
    return buffer.subarray(0, bytesRead).includes('%PDF-', 0, 'latin1');
  } finally {
    await fh.close();
  }
}

/**
 * The /api/pdf routes (spec §4.2, contract §6): synchronous extraction of an upload, jobs for files inside
 * INPUT_ROOTS, external OCR (callback → 202 at once; else wait up to wait_ms → 200 or 202) and its pages archive.
 */
export function pdfRoutes(api: ApiRouter, jobs: JobService, config: Config, engines: ApiEngines): void {
  const syncWaitMs = config.SYNC_WAIT_MS;
  const llmConfigured = config.llm?.vision === true;
  const tags = ['PDF'];
  const direct = { jobs, config, engines };
  api.add({
    method: 'post',
    path: '/api/pdf/process',
    summary: 'Extract the text of a PDF',
    tags,
    description:
      'Runs the pdf pipeline as a job and waits for it; past the limit, 504 with `details.job_id` and the work goes ' +
      'on. A repeated request for the same document, method, page range and languages is answered from the result ' +
      'cache (`X-Cache: hit`, without a job unless one is asked for with `Prefer: respond-async` or `wait_ms=0`) ' +
      'unless `useCache` is false; requests with a template or page images always run. A `native` request (text or ' +
      '`output_format=markdown`; no template or page images) that reads at most INLINE_PDF_MAX_PAGES pages is ' +
      'answered by the API itself, without a job (the same `data`; its errors carry no `details.job_id`), unless the client asks for a ' +
      'job (`Prefer: respond-async` or `wait_ms`).',
    body: processBody,
    bodyTypes: ['multipart'],
    responses: {
      200: jsonResponse(pdfProcessResult, 'The text'),
      403: errorResponse('The url is not allowed (a private, loopback or metadata address)'),
      422: errorResponse('Corrupt, encrypted or empty PDF'),
      429: errorResponse(
        'RATE_LIMITED: MAX_HEAVY_REQUESTS synchronous requests are being processed; retry after Retry-After',
      ),
      502: errorResponse('The url could not be fetched'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      if (body.extraction_method === 'vision_llm' && !llmConfigured) {
        throw new AppError(
          'PROVIDER_NOT_CONFIGURED',
          'vision_llm needs a language model that reads images (the local model does not): set LLM_BASE_URL, LLM_API_KEY ' +
            'and LLM_MODEL.',
          {},
        );
      }
      const options = jobBodyParameters('pdf', body);
      if ((body.file === undefined) === (body.url === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file and url.', {
          issues: [{ path: 'file', message: 'give exactly one of file and url' }],
        });
      }
      // A URL is downloaded by the job (SSRF-guarded, at most MAX_UPLOAD_MB): nothing is fetched by the API.
      if (!body.file)
        return answerSync(
          ctx,
          jobs,
          { jobType: 'pdf', parameters: validateBodyParameters('pdf', options) },
          syncWaitMs,
        );
      if (body.file.size === 0) throw new AppError('UNPROCESSABLE_INPUT', 'The file is empty.', { reason: 'empty' });
      // A small native request (text, or Markdown: issue 25) is answered without a job (issue 24); a larger one goes on
      // as a job.
      if (mayAnswerPdfDirectly(ctx, config, options) && (await answerPdfDirectly(ctx, direct, body.file, options)))
        return;
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = validateBodyParameters('pdf', options, uploadInput(upload));
      await withUpload(jobs, upload, async () => {
        // A cache hit is answered without a job (issue 24); no job took the upload, so it is removed.
        if (await answerPdfFromCache(ctx, { jobs, config }, upload.sha256, parameters)) return;
        await answerSync(ctx, jobs, { jobType: 'pdf', parameters }, syncWaitMs);
      });
    },
  });

  api.add({
    method: 'post',
    path: '/api/pdf/job',
    summary: 'Start a PDF job for a file on the server',
    tags,
    description:
      '`filename` must be an absolute path inside INPUT_ROOTS, symlinks resolved: else 403 FORBIDDEN and no job. A ' +
      'missing file inside the roots is accepted and the job fails with FILE_NOT_FOUND. Read the job with GET ' +
      '/api/jobs/{job_id}.',
    body: jobBody,
    responses: { 200: jsonResponse(jobAccepted, 'Accepted'), 403: errorResponse('The file lies outside INPUT_ROOTS') },
    handler: async (ctx, { body }) => {
      const { webhook, ...rest } = body;
      const parameters = validateBodyParameters('pdf', { ...rest, ...(webhook ? { webhook } : {}) });
      await assertInsideInputRoots(body.filename, config.inputRoots);
      const { state } = await jobs.create({ jobType: 'pdf', parameters, webhook });
      ctx.body = { status: 'success', data: { job_id: state.job_id, status: state.status } };
    },
  });

  api.add({
    method: 'post',
    path: '/api/pdf/process-external-ocr',
    summary: 'Markdown of a PDF from the external OCR service',
    tags,
    description:
      'With `callback_url` the answer is 202 with `data.job_id` at once and the result is posted to the callback; ' +
      'without it the request waits up to `wait_ms` (default 0) and answers 200 with the result or 202 with the job ' +
      'id.',
    body: externalOcrBody,
    bodyTypes: ['multipart'],
    responses: {
      200: jsonResponse(externalOcrResult, 'The result'),
      202: jsonResponse(jobInProgress, 'Accepted; poll the job or wait for the callback'),
      503: errorResponse('External OCR not configured'),
    },
    handler: async (ctx, { body: b }) => {
      const range = pageRange(b);
      if (!range.ok) throw new AppError('VALIDATION_ERROR', `${range.issue.message}.`, { issues: [range.issue] });
      if (b.callback_url && !/^https:/i.test(b.callback_url) && !config.ALLOW_HTTP_CALLBACKS) {
        throw new AppError('VALIDATION_ERROR', 'callback_url must be an https URL.', {
          issues: [{ path: 'callback_url', message: 'https required' }],
        });
      }
      // Contract §1: a file that is not a PDF is a bad request (400) even when no OCR service is configured (503).
      if (b.file.size > 0 && !(await hasPdfHeader(b.file.filepath))) {
        throw new AppError('INVALID_FORMAT', 'The file is not a PDF (no %PDF header).', {
          error_type: 'not_pdf',
          supported_formats: ['pdf'],
        });
      }
      if (!config.externalOcr) {
        throw new AppError(
          'PROVIDER_NOT_CONFIGURED',
          'External OCR is not configured: set EXTERNAL_OCR_URL (and EXTERNAL_OCR_API_KEY).',
          {},
        );
      }
      if (b.file.size === 0) throw new AppError('UNPROCESSABLE_INPUT', 'The file is empty.', { reason: 'empty' });
      // A request that waits for its job holds a slot of the heavy-request bound, taken before the job exists (429
      // when the bound is full), as every synchronous route does (`runSyncJob`); one answered 202 at once takes none.
      const waitMs = b.callback_url ? 0 : (b.wait_ms ?? 0);
      if (waitMs > 0) jobs.heavy.enter(ctx);
      const upload = await storeUpload(jobs.store, b.file);
      const parameters = {
        file_key: upload.key,
        original_name: upload.originalName,
        file_size: upload.size,
        includeImages: b.includeImages,
        includePageImages: b.includePageImages,
        use_cache: b.useCache && b.use_cache,
        ...(b.page_start ? { page_start: b.page_start } : {}),
        ...(b.page_end ? { page_end: b.page_end } : {}),
      };
      const webhook = b.callback_url
        ? {
            url: b.callback_url,
            ...(b.callback_token ? { token: b.callback_token } : {}),
            ...(b.jobId ? { jobId: b.jobId } : {}),
          }
        : undefined;
      // The job takes the upload as its input (kept for restarts); refused before its start, it is removed.
      let { state } = await withUpload(jobs, upload, () =>
        jobs.create({ jobType: 'external_ocr', parameters, webhook }),
      );
      const accepted = (s: JobState) => {
        ctx.status = 202;
        ctx.body = {
          status: 'success',
          data: {
            job_id: s.job_id,
            status: s.status,
            message: webhook
              ? 'Accepted; the result will be posted to callback_url.'
              : 'Still running; poll GET /api/jobs/{job_id}.',
          },
        };
      };
      if (waitMs === 0) return accepted(state);
      const deadline = Date.now() + waitMs;
      while (!isTerminal(state) && Date.now() < deadline)
        state = await jobs.waitForChange(state, (deadline - Date.now()) / 1000);
      if (!isTerminal(state)) return accepted(state);
      if (state.status === 'failed') throw jobErrorToAppError(state.error, state.job_id);
      // The record holds the full results (the live state only a preview).
      await answerWithResults(ctx, jobs.store, (await jobs.readRecord(state.job_id, { results: false })) ?? state);
    },
  });

  api.add({
    method: 'get',
    path: '/api/pdf/jobs/{job_id}/download-pages-archive',
    summary: 'Download the page renders of an external-OCR job',
    tags,
    params: jobIdParam,
    responses: {
      200: zipResponse,
      202: jsonResponse(jobInProgress, 'Still running'),
      400: errorResponse('No archive'),
      404: errorResponse('Unknown job'),
    },
    handler: async (ctx: Context, { params }) => {
      const s = await jobs.require(params.job_id);
      if (!isTerminal(s)) {
        ctx.status = 202;
        ctx.body = {
          status: 'success',
          data: { job_id: s.job_id, status: s.status, message: 'The job is still running.' },
        };
        return;
      }
      const st = await jobs.store.stat(jobOutputKey(s.job_id, 'pages.zip'));
      if (!st)
        throw new AppError(
          'NO_ARCHIVE',
          'This job has no pages archive (it failed, or ran without includePageImages).',
          { job_id: s.job_id, status: s.status },
        );
      ctx.body = await jobs.store.get(st.key);
      ctx.type = 'application/zip';
      ctx.length = st.size;
      ctx.set('Content-Disposition', attachment(`${s.job_id}-pages.zip`));
    },
  });
}
