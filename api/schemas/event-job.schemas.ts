import { sessionFields } from '../../core/jobs/job-params';
import { envelope, z } from '../openapi';
import { batchStatus, batchSummary, jobError, jobStatus } from './jobs.schemas';

/** The legacy `/api/event-job` API's bodies and answers (spec §4.11). */

/**
 * A legacy event job: a `session` job's parameters (core/jobs/job-params.ts), the same validation as /api/session/process.
 */
export const legacyJobBody = sessionFields;

/**
 * A job of a legacy batch: the spec writes them with `event`, `session` and `url` only (contract §8), so `filename`
 * (default: the sanitised session name) and `track` (default `general`) may be left out.
 */
export const legacyBatchJob = sessionFields
  .extend({
    filename: sessionFields.shape.filename.optional().openapi({ description: 'Default: the sanitised session name' }),
    track: sessionFields.shape.track.optional().openapi({ description: 'Default: `general`' }),
  })
  .openapi('LegacyBatchJob');

export const legacyBatchBody = z.object({
  batch_name: z.string().min(1).max(500),
  jobs: z.array(legacyBatchJob).min(1, 'a batch needs at least one job'),
});

export const failAllBody = z.object({ batch_id: z.string().min(1), reason: z.string().max(1000).optional() });

export const legacyJob = z
  .object({
    job_id: z.string(),
    status: jobStatus,
    progress: z.object({ step: z.string(), percent: z.number() }),
    results: z.object({ markdown_file: z.string().nullable(), assets: z.array(z.string()) }),
    error: jobError.optional(),
  })
  .openapi('LegacyJob');

export const legacyBatchAccepted = z
  .object({ batch_id: z.string(), batch_name: z.string(), status: batchStatus, job_count: z.number().int() })
  .openapi('LegacyBatchAccepted');

export const failAllResult = z
  .object({ batch_id: z.string(), failed_count: z.number().int(), message: z.string() })
  .openapi('FailAllResult');

/** The batch as the new API shows it, without its timestamps. */
export const legacyBatch = batchSummary.omit({ created_at: true, updated_at: true }).openapi('LegacyBatch');

/**
 * Optional: without `active` the flag flips (the spec's bare call); with it the flag is set, so a retry is harmless.
 */
export const toggleActiveBody = z.object({ active: z.boolean().optional() }).strict().openapi('ToggleActiveBody');

export const toggleActiveResult = z
  .object({ batch_id: z.string(), active: z.boolean(), message: z.string() })
  .openapi('ToggleActiveResult');

export const batchStillRunning = z
  .object({ batch_id: z.string(), status: batchStatus, message: z.string() })
  .openapi('BatchStillRunning');

export const restartResult = z
  .object({ job_id: z.string(), status: jobStatus, message: z.string() })
  .openapi('RestartResult');

/** The multi-segment path of GET /api/event-job/files/{path}. */
export const filePathParam = z.object({
  path: z
    .string()
    .min(1)
    .openapi({
      description:
        'A path as the API hands it out (`assets`, `target_dir`): `jobs/<job_id>/out/<file>`, or the legacy `<job_id>/<file>`. ' +
        'It may contain slashes: send it verbatim, or with each segment percent-encoded.',
      example: 'jobs/job-6f1c2d9e-3b4a-4c5d-8e9f-0a1b2c3d4e5f/out/result.md',
    }),
});

export const folderListing = z
  .object({
    path: z.string(),
    files: z.array(z.object({ path: z.string(), size: z.number().int(), mime: z.string() })),
  })
  .openapi('FolderListing');

const binary = { schema: z.string().openapi({ format: 'binary' }) };

/**
 * The 200 answer of GET /api/event-job/files/{path}: a file with the media type it was stored with (the types jobs
 * produce are listed; anything else is application/octet-stream), or for a folder the JSON listing. A JSON file a
 * job produced (`tables.json`, `external-ocr.json`) is served as application/json too. application/octet-stream
 * comes first: client generators that model one answer per status take the first type they know
 * (openapi-python-client: application/octet-stream, text, JSON), and only bytes hold every one of these files.
 */
export const fileDownloadContent = {
  'application/octet-stream': binary,
  'text/markdown': binary,
  'application/zip': binary,
  'image/png': binary,
  'image/jpeg': binary,
  'application/json': { schema: envelope(folderListing) },
};
