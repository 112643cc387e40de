import { errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import {
  batchList,
  batchListQuery,
  jobActionResult,
  jobDeleted,
  jobIdParam,
  jobList,
  jobListQuery,
} from '../schemas/jobs.schemas';
import type { BatchService } from '../services/batches';
import { JobList } from '../services/job-list';
import type { JobService } from '../services/jobs';

/**
 * The job list and the job actions of contract §15: `GET /api/jobs`, `GET /api/jobs/batches`, and restart and cancel
 * of one job (its delete: `jobDeleteRoute`). Registered before `GET /api/jobs/{job_id}` (jobs.routes.ts), so `batches`
 * is never taken for a job id.
 */
export function jobListRoutes(api: ApiRouter, deps: { jobs: JobService; batches: BatchService }): void {
  const { jobs } = deps;
  const list = new JobList(jobs, deps.batches);
  const unknownJob = errorResponse('Unknown job (JOB_NOT_FOUND)');

  api.add({
    method: 'get',
    path: '/api/jobs',
    summary: 'List jobs',
    description:
      'Newest first, filtered by status, type, batch, user and creation time; `next_cursor` pages on. Finished ' +
      'jobs stay listed after Temporal’s retention (from their records); running ones show their live status and ' +
      'progress.',
    tags: ['Jobs'],
    query: jobListQuery,
    responses: { 200: jsonResponse(jobList, 'A page of jobs') },
    handler: async (ctx, { query }) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'success', data: await list.listJobs(query) };
    },
  });

  api.add({
    method: 'get',
    path: '/api/jobs/batches',
    summary: 'List batches',
    description: 'Newest first, filtered by status, user and creation time; `next_cursor` pages on.',
    tags: ['Jobs'],
    query: batchListQuery,
    responses: { 200: jsonResponse(batchList, 'A page of batches') },
    handler: async (ctx, { query }) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'success', data: await list.listBatches(query) };
    },
  });

  api.add({
    method: 'post',
    path: '/api/jobs/{job_id}/restart',
    summary: 'Restart a failed job',
    description: '`failed` → `pending` under the same id; the new run reuses the steps already done.',
    tags: ['Jobs'],
    params: jobIdParam,
    responses: {
      200: jsonResponse(jobActionResult, 'Restarted'),
      404: unknownJob,
      409: errorResponse('The job is not failed (INVALID_STATE)'),
    },
    handler: async (ctx, { params }) => {
      const s = await jobs.restart(params.job_id);
      ctx.body = { status: 'success', data: { job_id: s.job_id, status: s.status, message: 'Job restarted' } };
    },
  });

  api.add({
    method: 'post',
    path: '/api/jobs/{job_id}/cancel',
    summary: 'Cancel a job',
    description:
      'A pending or processing job ends `failed` with the error code `CANCELLED` (and can be restarted). Answered ' +
      'once its failed record is written.',
    tags: ['Jobs'],
    params: jobIdParam,
    responses: {
      200: jsonResponse(jobActionResult, 'Cancelled'),
      404: unknownJob,
      409: errorResponse('The job has finished, or its batch has not started it yet (INVALID_STATE)'),
    },
    handler: async (ctx, { params }) => {
      const s = await jobs.cancel(params.job_id);
      const message = s.status === 'failed' ? 'Job cancelled' : 'Cancel requested; the job fails as soon as it sees it';
      ctx.body = { status: 'success', data: { job_id: s.job_id, status: s.status, message } };
    },
  });
}

/**
 * `DELETE /api/jobs/{job_id}` (contract §15), registered after `GET /api/jobs/batch/{batch_id}` so the document lists
 * the batch route first, as clients that match paths in the document's order need.
 */
export function jobDeleteRoute(api: ApiRouter, jobs: JobService): void {
  api.add({
    method: 'delete',
    path: '/api/jobs/{job_id}',
    summary: 'Delete a finished job',
    description:
      'Removes the job’s record, outputs, uploaded input, the cache entries that name it and its workflow history; ' +
      'afterwards the job is unknown (404) and no longer listed.',
    tags: ['Jobs'],
    params: jobIdParam,
    responses: {
      200: jsonResponse(jobDeleted, 'Deleted'),
      404: errorResponse('Unknown job (JOB_NOT_FOUND)'),
      409: errorResponse('The job is still running (INVALID_STATE)'),
    },
    handler: async (ctx, { params }) => {
      await jobs.remove(params.job_id);
      ctx.body = { status: 'success', data: { job_id: params.job_id, deleted: true, message: 'Job deleted' } };
    },
  });
}
