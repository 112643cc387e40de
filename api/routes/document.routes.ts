import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { documentProcessBody, documentProcessResult } from '../schemas/document.schemas';
import { jobBodyParameters } from '../schemas/job-body';
import { validateBodyParameters } from '../services/job-intake';
import type { JobService } from '../services/jobs';
import { answerSync } from '../services/sync-answer';
import { storeUpload, uploadInput, withUpload } from '../uploads';

/**
 * The /api/document route (contract §12): a document of any format the readers know, by its content, read as a
 * `document` job and waited for (504 with the job id past SYNC_WAIT_MS; 202 at once with `Prefer: respond-async`).
 */
export function documentRoutes(api: ApiRouter, jobs: JobService, config: Config): void {
  api.add({
    method: 'post',
    path: '/api/document/process',
    summary: 'Text and Markdown of a document: Word, PowerPoint, Excel, OpenDocument, RTF, EPUB, e-mail, HTML',
    tags: ['Documents'],
    description:
      'The format is decided by the content (magic bytes, container entries), never by the name alone: DOCX, DOC, ' +
      'ODT, RTF, PPTX, PPT, ODP, XLSX, XLS, ODS, CSV, TSV, EPUB, EML, MSG, HTML, Markdown and text. The answer has ' +
      'the PDF answer’s shape, with `metadata.format` and one `metadata.text_contents[]` entry per page, slide, ' +
      'sheet, chapter, message or attachment. A PDF or an image sent here is read by its own pipeline and answered ' +
      'as /api/pdf/process or /api/imageocr/process answers it. Runs as a `document` job and waits for it; past ' +
      'the limit, 504 with `details.job_id` and the work goes on.',
    body: documentProcessBody,
    bodyTypes: ['multipart'],
    responses: {
      200: jsonResponse(documentProcessResult, 'The document'),
      400: errorResponse('INVALID_FORMAT (details.supported_formats) or an option this endpoint does not take'),
      403: errorResponse('The url is not allowed (a private, loopback or metadata address)'),
      413: errorResponse('The file, or what its container expands to, is larger than the input budgets'),
      422: errorResponse('Encrypted, password-protected or corrupt (details.reason)'),
      429: errorResponse(
        'RATE_LIMITED: MAX_HEAVY_REQUESTS synchronous requests are being processed; retry after Retry-After',
      ),
      502: errorResponse('The url could not be fetched'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      if ((body.file === undefined) === (body.url === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file and url.', {
          issues: [{ path: 'file', message: 'give exactly one of file and url' }],
        });
      }
      const options = jobBodyParameters('document', body);
      const { webhook } = body;
      // A URL is downloaded by the job (SSRF-guarded, at most MAX_UPLOAD_MB): nothing is fetched by the API.
      if (!body.file) {
        const parameters = validateBodyParameters('document', options);
        return answerSync(ctx, jobs, { jobType: 'document', parameters, webhook }, config.SYNC_WAIT_MS);
      }
      if (body.file.size === 0) throw new AppError('UNPROCESSABLE_INPUT', 'The file is empty.', { reason: 'empty' });
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = validateBodyParameters('document', options, uploadInput(upload));
      await withUpload(jobs, upload, () =>
        answerSync(ctx, jobs, { jobType: 'document', parameters, webhook }, config.SYNC_WAIT_MS),
      );
    },
  });
}
