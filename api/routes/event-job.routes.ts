import { AppError } from '../../core/errors';
import { errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import {
  batchStillRunning,
  failAllBody,
  failAllResult,
  fileDownloadContent,
  filePathParam,
  legacyBatch,
  legacyBatchAccepted,
  legacyBatchBody,
  legacyJob,
  legacyJobBody,
  restartResult,
  toggleActiveBody,
  toggleActiveResult,
} from '../schemas/event-job.schemas';
import { batchIdParam, jobAccepted, jobIdParam, jobInProgress, zipResponse } from '../schemas/jobs.schemas';
import { attachment, jobArchiveEntries, zipStream, type ArchiveEntry } from '../services/archive';
import type { BatchService } from '../services/batches';
import { sendJobFile } from '../services/job-files';
import type { JobService } from '../services/jobs';
import { sendJobArchive } from './jobs.routes';
import { sessionParameters } from '../services/job-intake';
import { sanitizeName } from '../../core/stores/session-store';

/**
 * A legacy batch job as the session job takes it: `filename` the sanitised session name, `track` `general` when absent.
 */
function withLegacyDefaults(job: Record<string, unknown>): Record<string, unknown> {
  const out = { ...job };
  if (out.filename === undefined && typeof out.session === 'string')
    out.filename = sanitizeName(out.session, 'session');
  if (out.track === undefined) out.track = 'general';
  return out;
}

/** `results` of a legacy job: the Markdown file and assets of its session output. */
function legacyResults(results: Record<string, unknown> | null): { markdown_file: string | null; assets: string[] } {
  const r = (results ?? {}) as { markdown_file?: string; assets?: string[] };
  return { markdown_file: r.markdown_file ?? null, assets: r.assets ?? [] };
}

/** The legacy `/api/event-job` API: session jobs and batches on the same engine, in the legacy shapes. */
export function eventJobRoutes(api: ApiRouter, jobs: JobService, batches: BatchService, maxBatchJobs: number): void {
  const tags = ['Legacy event jobs'];

  api.add({
    method: 'post',
    path: '/api/event-job/jobs',
    summary: 'Create a session job (legacy)',
    tags,
    body: legacyJobBody,
    responses: { 200: jsonResponse(jobAccepted, 'Accepted'), 404: errorResponse('Unknown template') },
    handler: async (ctx, { body }) => {
      const parameters = await sessionParameters(body as Record<string, unknown>);
      const { state } = await jobs.create({
        jobType: 'session',
        parameters,
        webhook: parameters.webhook as { url: string } | undefined,
        legacy: true,
      });
      ctx.body = { status: 'success', data: { job_id: state.job_id, status: state.status } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/event-job/jobs/{job_id}',
    summary: 'Get a session job (legacy)',
    tags,
    params: jobIdParam,
    responses: { 200: jsonResponse(legacyJob, 'The job'), 404: errorResponse('Unknown job') },
    handler: async (ctx, { params }) => {
      const s = await jobs.require(params.job_id);
      ctx.body = {
        status: 'success',
        data: {
          job_id: s.job_id,
          status: s.status,
          progress: { step: s.progress.step, percent: s.progress.percent },
          results: legacyResults(s.results),
          ...(s.error ? { error: s.error } : {}),
        },
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/event-job/batches',
    summary: 'Create a batch of session jobs (legacy)',
    tags,
    body: legacyBatchBody,
    responses: { 200: jsonResponse(legacyBatchAccepted, 'Accepted'), 404: errorResponse('Unknown template') },
    handler: async (ctx, { body }) => {
      if (body.jobs.length > maxBatchJobs) {
        throw new AppError('VALIDATION_ERROR', `A batch holds at most ${maxBatchJobs} jobs.`, {
          limit: maxBatchJobs,
          issues: [{ path: 'jobs', message: `at most ${maxBatchJobs} jobs` }],
        });
      }
      const parameters = [];
      for (const [i, j] of body.jobs.entries())
        parameters.push(await sessionParameters(withLegacyDefaults(j), ['jobs', i]));
      const { state } = await batches.create({
        batchName: body.batch_name,
        jobs: parameters.map((p) => ({
          jobType: 'session' as const,
          parameters: p,
          webhook: p.webhook as { url: string } | undefined,
        })),
        legacy: true,
      });
      ctx.body = {
        status: 'success',
        data: {
          batch_id: state.batch_id,
          batch_name: state.batch_name,
          status: state.status,
          job_count: state.job_count,
        },
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/event-job/batches/fail-all',
    summary: 'Fail every unfinished job of a batch (legacy)',
    tags,
    body: failAllBody,
    responses: { 200: jsonResponse(failAllResult, 'Failed count'), 404: errorResponse('Unknown batch') },
    handler: async (ctx, { body }) => {
      const reason = body.reason || 'Failed by request (fail-all)';
      const failed = await batches.failAll(body.batch_id, reason);
      ctx.body = {
        status: 'success',
        data: { batch_id: body.batch_id, failed_count: failed, message: `${failed} job(s) failed` },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/event-job/batches/{batch_id}',
    summary: 'Get a batch (legacy)',
    tags,
    params: batchIdParam,
    responses: { 200: jsonResponse(legacyBatch, 'The batch'), 404: errorResponse('Unknown batch') },
    handler: async (ctx, { params }) => {
      const s = await batches.require(params.batch_id);
      const list = await batches.jobStatuses(s);
      ctx.body = {
        status: 'success',
        data: {
          batch_id: s.batch_id,
          batch_name: s.batch_name,
          status: s.status,
          active: s.active,
          job_count: s.job_count,
          completed_count: s.completed_count,
          failed_count: s.failed_count,
          jobs: list,
        },
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/event-job/batches/{batch_id}/toggle-active',
    summary: 'Pause or resume a batch (legacy)',
    tags,
    params: batchIdParam,
    description:
      'Without a body the flag flips; `{"active": true|false}` sets it, so a retried request does not flip it back.',
    body: toggleActiveBody,
    bodyOptional: true,
    responses: { 200: jsonResponse(toggleActiveResult, 'New flag'), 404: errorResponse('Unknown batch') },
    handler: async (ctx, { params, body }) => {
      const active = await batches.toggleActive(params.batch_id, body.active);
      ctx.body = {
        status: 'success',
        data: { batch_id: params.batch_id, active, message: active ? 'Batch activated' : 'Batch deactivated' },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/event-job/batches/{batch_id}/archive',
    summary: 'Download a batch’s files as a ZIP (legacy)',
    tags,
    params: batchIdParam,
    responses: {
      200: zipResponse,
      202: jsonResponse(batchStillRunning, 'Still running'),
      400: errorResponse('No files to archive'),
      404: errorResponse('Unknown batch'),
    },
    handler: async (ctx, { params }) => {
      const s = await batches.require(params.batch_id);
      if (s.status !== 'completed') {
        ctx.status = 202;
        ctx.body = {
          status: 'success',
          data: { batch_id: s.batch_id, status: s.status, message: 'The batch is still running.' },
        };
        return;
      }
      const m = await batches.manifest(s.batch_id);
      const entries: ArchiveEntry[] = [];
      for (const j of m.jobs) entries.push(...(await jobArchiveEntries(jobs.store, j.job_id, `${j.job_id}/`)));
      if (entries.length === 0)
        throw new AppError('NO_ARCHIVE', 'The jobs of this batch produced no files.', { batch_id: s.batch_id });
      ctx.type = 'application/zip';
      ctx.set('Content-Disposition', attachment(`${s.batch_id}.zip`));
      ctx.body = zipStream(jobs.store, entries, {
        batch_id: s.batch_id,
        batch_name: s.batch_name,
        job_count: s.job_count,
      });
    },
  });

  api.add({
    method: 'post',
    path: '/api/event-job/{job_id}/restart',
    summary: 'Restart a failed job (legacy)',
    tags,
    params: jobIdParam,
    responses: {
      200: jsonResponse(restartResult, 'Restarted'),
      404: errorResponse('Unknown job'),
      409: errorResponse('The job is not failed'),
    },
    handler: async (ctx, { params }) => {
      const s = await jobs.restart(params.job_id);
      ctx.body = { status: 'success', data: { job_id: s.job_id, status: s.status, message: 'Job restarted' } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/event-job/jobs/{job_id}/download-archive',
    summary: 'Download a job’s files as a ZIP (legacy)',
    tags,
    params: jobIdParam,
    responses: {
      200: zipResponse,
      202: jsonResponse(jobInProgress, 'Still running'),
      400: errorResponse('No files to archive'),
      404: errorResponse('Unknown job'),
    },
    handler: async (ctx, { params }) => sendJobArchive(ctx, jobs, params.job_id),
  });

  const filesPrefix = '/api/event-job/files/';
  api.add({
    method: 'get',
    path: '/api/event-job/files/{path}',
    summary: 'Download a file a job produced',
    tags,
    description:
      '`path` is a path the API handed out (`assets`, `target_dir`; `jobs/<job_id>/out/<file>`) or the legacy ' +
      '`<job_id>/<file>`, and may contain slashes. A file answers with its own media type (text/markdown, ' +
      'application/json, application/zip, image/png, ...); a folder (`target_dir`) answers a JSON listing of the ' +
      'files under it, each with the path that downloads it. Paths that would leave a job’s output folder ' +
      '(`..`, `.`, empty segments, absolute paths, backslashes, records or a job’s internal state) are 403 FORBIDDEN; ' +
      'an unknown job or file is 404 FILE_NOT_FOUND.',
    params: filePathParam,
    koaPath: '/api/event-job/files/{*path}',
    responses: {
      200: { description: 'The file (its own media type), or the listing of a folder', content: fileDownloadContent },
      403: errorResponse('The path leaves the job output folders'),
      404: errorResponse('No such file'),
    },
    // The raw path, not the router's decoded parameter: each segment is decoded exactly once, then checked.
    handler: (ctx) =>
      sendJobFile(ctx, jobs.store, ctx.path.startsWith(filesPrefix) ? ctx.path.slice(filesPrefix.length) : ''),
  });
}
