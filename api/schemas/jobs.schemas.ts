import { PUBLIC_JOB_TYPES, webhookConfig } from '../../core/jobs/job-params';
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
