import { BATCH_ID_PATTERN } from '../../core/jobs/ids';
import { jobParamsByType, PUBLIC_JOB_TYPES, webhookConfig, type JobType } from '../../core/jobs/job-params';
import { z } from '../openapi';

export const jobIdParam = z.object({
  job_id: z.string().openapi({ example: 'job-6f1c2d9e-3b4a-4c5d-8e9f-0a1b2c3d4e5f' }),
});
export const batchIdParam = z.object({
  batch_id: z.string().openapi({ example: 'batch-6f1c2d9e-3b4a-4c5d-8e9f-0a1b2c3d4e5f' }),
});

// Rebuilt from its shape here: zod 4 adds `.openapi` to schemas created after the extension only.
export const webhookSchema = z.object(webhookConfig.shape).openapi('WebhookConfig');

/** The job types a client may create (core/jobs/job-params.ts). */
const jobType = z.enum(PUBLIC_JOB_TYPES);

export const createJobBody = z
  .object({
    job_type: jobType,
    parameters: z.record(z.string(), z.unknown()).default({}),
    user_id: z.string().min(1).max(200).optional(),
    webhook: webhookSchema.optional(),
  })
  .openapi('CreateJob');
export type CreateJobBody = z.infer<typeof createJobBody>;

export const createBatchBody = z
  .object({
    batch_name: z.string().min(1).max(500),
    jobs: z
      .array(
        z.object({
          job_type: jobType,
          parameters: z.record(z.string(), z.unknown()).default({}),
          webhook: webhookSchema.optional(),
        }),
      )
      .min(1, 'a batch needs at least one job'),
    user_id: z.string().min(1).max(200).optional(),
  })
  .openapi('CreateBatch');

export const jobQuery = z.object({
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(60)
    .optional()
    .openapi({ description: 'Long-poll: seconds to wait for a status or progress change (max 60).' }),
});

export const jobStatus = z.enum(['pending', 'processing', 'completed', 'failed']);
export const batchStatus = z.enum(['pending', 'processing', 'completed']);

/** Every job type a job may have (the public ones and those the API and the session pipeline start themselves). */
const anyJobType = z.enum(Object.keys(jobParamsByType) as [JobType, ...JobType[]]);

const createdBound = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: `${description} (ISO 8601 with a time zone).`, example: '2025-05-01T00:00:00Z' });

/** The filters and paging of both listings (`GET /api/jobs`, `GET /api/jobs/batches`). */
const listPaging = {
  user_id: z.string().min(1).max(200).optional().openapi({ description: 'Only those created with this `user_id`.' }),
  created_after: createdBound('Only those created at or after this time'),
  created_before: createdBound('Only those created before this time'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ description: 'Page size, 1 to 200 (default 50).' }),
  cursor: z
    .string()
    .max(500)
    .optional()
    .openapi({ description: 'The `next_cursor` of the previous page, with the same filters.' }),
};

export const jobListQuery = z.object({
  status: jobStatus.optional().openapi({ description: 'Only jobs in this state.' }),
  job_type: anyJobType.optional().openapi({ description: 'Only jobs of this type.' }),
  batch_id: z
    .string()
    .regex(BATCH_ID_PATTERN, 'not a batch id (batch-<uuid>)')
    .optional()
    .openapi({ description: 'Only the jobs of this batch.' }),
  ...listPaging,
});

export const batchListQuery = z.object({
  status: batchStatus.optional().openapi({ description: 'Only batches in this state.' }),
  ...listPaging,
});

export const eventsQuery = z.object({ last_event_id: z.coerce.number().int().min(0).optional() });

const progress = z.object({ step: z.string(), percent: z.number(), message: z.string() });
const log = z.object({
  timestamp: z.string(),
  level: z.enum(['debug', 'info', 'warning', 'error']),
  message: z.string(),
});
export const jobError = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) });

export const jobRecord = z
  .object({
    job_id: z.string(),
    job_type: z.string(),
    status: jobStatus,
    created_at: z.string(),
    updated_at: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    user_id: z.string().optional(),
    batch_id: z.string().optional(),
    progress,
    results: z.record(z.string(), z.unknown()).nullable(),
    logs: z.array(log),
    error: jobError.optional(),
  })
  .openapi('Job');

export const batchSummary = z
  .object({
    batch_id: z.string(),
    batch_name: z.string(),
    status: batchStatus,
    active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    job_count: z.number().int(),
    completed_count: z.number().int(),
    failed_count: z.number().int(),
    jobs: z.array(z.object({ job_id: z.string(), status: z.string() })),
  })
  .openapi('Batch');

const nextCursor = z
  .string()
  .nullable()
  .openapi({ description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' });

/** One job of `GET /api/jobs`: null where the job has no such field. */
export const jobSummary = z
  .object({
    job_id: z.string(),
    job_type: z.string(),
    status: jobStatus,
    progress,
    created_at: z.string(),
    updated_at: z.string(),
    batch_id: z.string().nullable(),
    user_id: z.string().nullable(),
    error_code: z.string().nullable().openapi({ description: 'The error code of a failed job.' }),
  })
  .openapi('JobSummary');

/** `data` of GET /api/jobs: newest first. */
export const jobList = z.object({ jobs: z.array(jobSummary), next_cursor: nextCursor }).openapi('JobList');

/** One batch of `GET /api/jobs/batches`: its state and counts as `GET /api/jobs/batch/{batch_id}` shows them. */
export const batchListItem = z
  .object({
    batch_id: z.string(),
    batch_name: z.string(),
    status: batchStatus,
    active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    user_id: z.string().nullable(),
    job_count: z.number().int(),
    pending_count: z.number().int(),
    processing_count: z.number().int(),
    completed_count: z.number().int(),
    failed_count: z.number().int(),
  })
  .openapi('BatchSummary');

export const batchList = z.object({ batches: z.array(batchListItem), next_cursor: nextCursor }).openapi('BatchList');

/** `data` of a job action (restart, cancel): the job's status after it. */
export const jobActionResult = z
  .object({ job_id: z.string(), status: jobStatus, message: z.string() })
  .openapi('JobActionResult');

/** `data` of DELETE /api/jobs/{job_id}. */
export const jobDeleted = z
  .object({ job_id: z.string(), deleted: z.literal(true), message: z.string() })
  .openapi('JobDeleted');

/** `data` of POST /api/jobs/. */
export const jobCreated = z.object({ job_id: z.string(), job: jobRecord }).openapi('JobCreated');

/** `data` of POST /api/jobs/batch: the batch and its jobs as created. */
export const batchCreated = z
  .object({
    batch_id: z.string(),
    batch: z.object({
      batch_id: z.string(),
      batch_name: z.string(),
      status: batchStatus,
      job_count: z.number().int(),
      jobs: z.array(jobRecord),
    }),
  })
  .openapi('BatchCreated');

/** `data` of POST /api/pdf/job and POST /api/event-job/jobs: the new job's id and status. */
export const jobAccepted = z.object({ job_id: z.string(), status: jobStatus }).openapi('JobAccepted');

/**
 * A 202 answer naming a job that is accepted or still running (a download asked too early, an async OCR request): poll
 * it.
 */
export const jobInProgress = z
  .object({ job_id: z.string(), status: jobStatus, message: z.string() })
  .openapi('JobInProgress');

const binary = { schema: z.string().openapi({ format: 'binary' }) };

/**
 * The 200 answer of an archive download. It is sent as application/zip; application/octet-stream is listed too (the
 * same bytes), because client generators that model only generic binary answers (openapi-python-client reads
 * application/octet-stream, text and JSON) would drop an application/zip answer from the client they write.
 */
export const zipResponse = {
  description: 'ZIP archive (sent as application/zip; application/octet-stream names the same bytes)',
  content: { 'application/zip': binary, 'application/octet-stream': binary },
};
