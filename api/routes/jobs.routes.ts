import { AppError } from '../../core/errors';
import { isTerminal } from '../../workflows/job-state';
import { errorResponse, jsonResponse, z } from '../openapi';
import type { ApiRouter } from '../api-router';
import {
  batchCreated,
  batchIdParam,
  batchSummary,
  createBatchBody,
  createJobBody,
  eventsQuery,
  jobCreated,
  jobIdParam,
  jobQuery,
  jobRecord,
  jobInProgress,
  zipResponse,
} from '../schemas/jobs.schemas';
import { attachment, jobArchiveEntries, zipStream } from '../services/archive';
import type { BatchService } from '../services/batches';
import { streamJobEvents } from '../services/events';
import { jobView } from '../services/job-reads';
import type { JobService } from '../services/jobs';
import { checkSessionRequest, validateJob } from '../services/job-intake';
import { jobDeleteRoute, jobListRoutes } from './job-list.routes';

export interface JobRouteDeps {
  jobs: JobService;
  batches: BatchService;
  maxBatchJobs: number;
}

const idempotencyKey = (h: string | string[] | undefined): string | undefined => {
  const v = Array.isArray(h) ? h[0] : h;
  if (v === undefined || v === '') return undefined;
  if (v.length > 200)
    throw new AppError('VALIDATION_ERROR', 'Idempotency-Key is too long (200 characters at most).', {
      issues: [{ path: 'Idempotency-Key', message: 'too long' }],
    });
  return v;
};

export function jobRoutes(api: ApiRouter, deps: JobRouteDeps): void {
  const { jobs, batches } = deps;
  // The listings and actions first: `/api/jobs/batches` before `/api/jobs/{job_id}`.
  jobListRoutes(api, deps);

  api.add({
    method: 'post',
    path: '/api/jobs/',
    summary: 'Create a job',
    description: 'Starts a job; it is `pending` until a worker takes it. Send `Idempotency-Key` to make retries safe.',
    tags: ['Jobs'],
    body: createJobBody,
    responses: { 200: jsonResponse(jobCreated, 'Accepted'), 404: errorResponse('Unknown template (session jobs)') },
    handler: async (ctx, { body }) => {
      const job = validateJob(body.job_type, body.parameters);
      if (job.jobType === 'session') await checkSessionRequest(job.parameters, ['parameters']);
      const webhook = body.webhook ?? job.parameters.webhook;
      const { state } = await jobs.create({
        ...job,
        userId: body.user_id,
        webhook,
        idempotencyKey: idempotencyKey(ctx.headers['idempotency-key']),
      });
      ctx.body = { status: 'success', data: { job_id: state.job_id, job: jobView(state) } };
    },
  });

  api.add({
    method: 'post',
    path: '/api/jobs/batch',
    summary: 'Create a batch of jobs',
    tags: ['Jobs'],
    body: createBatchBody,
    responses: { 200: jsonResponse(batchCreated, 'Accepted'), 404: errorResponse('Unknown template (session jobs)') },
    handler: async (ctx, { body }) => {
      if (body.jobs.length > deps.maxBatchJobs) {
        throw new AppError('VALIDATION_ERROR', `A batch holds at most ${deps.maxBatchJobs} jobs.`, {
          limit: deps.maxBatchJobs,
          issues: [{ path: 'jobs', message: `at most ${deps.maxBatchJobs} jobs` }],
        });
      }
      const specs = body.jobs.map((j, i) => ({
        ...validateJob(j.job_type, j.parameters, ['jobs', i, 'parameters']),
        webhook: j.webhook,
      }));
      for (const [i, s] of specs.entries())
        if (s.jobType === 'session') await checkSessionRequest(s.parameters, ['jobs', i, 'parameters']);
      const { state, jobs: records } = await batches.create({
        batchName: body.batch_name,
        jobs: specs.map((s) => ({ ...s, webhook: s.webhook ?? s.parameters.webhook })),
        userId: body.user_id,
        idempotencyKey: idempotencyKey(ctx.headers['idempotency-key']),
      });
      ctx.body = {
        status: 'success',
        data: {
          batch_id: state.batch_id,
          batch: {
            batch_id: state.batch_id,
            batch_name: state.batch_name,
            status: state.status,
            job_count: state.job_count,
            jobs: records.map(jobView),
          },
        },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/jobs/batch/{batch_id}',
    summary: 'Get a batch',
    tags: ['Jobs'],
    params: batchIdParam,
    responses: { 200: jsonResponse(batchSummary, 'The batch'), 404: errorResponse('Unknown batch') },
    handler: async (ctx, { params }) => {
      const s = await batches.require(params.batch_id);
      const { statuses: _s, processing_count: _p, pending_count: _q, legacy: _l, ...rest } = s;
      (void _s, _p, _q, _l);
      ctx.body = { status: 'success', data: { ...rest, jobs: await batches.jobStatuses(s) } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/jobs/{job_id}',
    summary: 'Get a job',
    description:
      'Status, progress, results and logs. `wait=N` long-polls: it answers as soon as the job changes, or after N ' +
      'seconds.',
    tags: ['Jobs'],
    params: jobIdParam,
    query: jobQuery,
    responses: { 200: jsonResponse(jobRecord, 'The job'), 404: errorResponse('Unknown job') },
    handler: async (ctx, { params, query }) => {
      let s = query.wait ? await jobs.requireForWait(params.job_id, query.wait) : await jobs.require(params.job_id);
      if (query.wait) s = await jobs.waitForChange(s, query.wait);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'success', data: jobView(s) };
    },
  });
  jobDeleteRoute(api, jobs);

  api.add({
    method: 'get',
    path: '/api/jobs/{job_id}/events',
    summary: 'Stream a job’s events (Server-Sent Events)',
    description: 'The same events as the webhooks, each with an id; reconnect with `Last-Event-ID` to resume.',
    tags: ['Jobs'],
    params: jobIdParam,
    query: eventsQuery,
    responses: {
      200: {
        description: 'text/event-stream; the schema describes each event (`data` is the webhook body as JSON text)',
        content: {
          'text/event-stream': {
            schema: z.object({
              event: z.string().openapi({ description: 'The phase: processing, completed, failed, ...' }),
              data: z.string().openapi({ description: 'The event body (as a webhook sends it), JSON text' }),
              id: z.string().optional(),
              retry: z.number().int().optional(),
            }),
          },
        },
      },
      404: errorResponse('Unknown job'),
    },
    handler: async (ctx, { params, query }) => {
      const s = await jobs.require(params.job_id);
      const header = Number(ctx.get('Last-Event-ID'));
      const last = Number.isInteger(header) && header > 0 ? header : (query.last_event_id ?? 0);
      streamJobEvents(ctx, jobs, s, last);
    },
  });

  api.add({
    method: 'get',
    path: '/api/jobs/{job_id}/download-archive',
    summary: 'Download a job’s files as a ZIP',
    description: '202 while the job runs; 400 `NO_ARCHIVE` when it finished without files.',
    tags: ['Jobs'],
    params: jobIdParam,
    responses: {
      200: zipResponse,
      202: jsonResponse(jobInProgress, 'Still running'),
      400: errorResponse('Finished without files (NO_ARCHIVE)'),
      404: errorResponse('Unknown job'),
    },
    handler: async (ctx, { params }) => sendJobArchive(ctx, jobs, params.job_id),
  });
}

/** 202 while running, 400 `NO_ARCHIVE` without files, else a streamed ZIP. */
export async function sendJobArchive(
  ctx: import('koa').Context,
  jobs: JobService,
  jobId: string,
  filename = `${jobId}.zip`,
): Promise<void> {
  const s = await jobs.require(jobId);
  if (!isTerminal(s)) {
    ctx.status = 202;
    ctx.body = {
      status: 'success',
      data: { job_id: jobId, status: s.status, message: 'The job is still running; try again when it has finished.' },
    };
    return;
  }
  const entries = await jobArchiveEntries(jobs.store, jobId);
  if (entries.length === 0)
    throw new AppError('NO_ARCHIVE', 'This job produced no files to archive.', { job_id: jobId, status: s.status });
  ctx.type = 'application/zip';
  ctx.set('Content-Disposition', attachment(filename));
  ctx.body = zipStream(jobs.store, entries, {
    job_id: jobId,
    job_type: s.job_type,
    status: s.status,
    created_at: s.created_at,
    updated_at: s.updated_at,
  });
}
