import type { Config } from '../../core/config/config';
import { listCachedSessions } from '../../core/stores/session-store';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { cachedSessions, sessionAccepted, sessionBody, sessionResult } from '../schemas/session.schemas';
import type { JobService } from '../services/jobs';
import { answerSync } from '../services/sync-answer';
import { sessionParameters } from '../services/job-intake';

/**
 * Sessions (spec §4.6, contract §8): `process` runs a `session` job and waits like the media endpoints
 * (MEDIA_SYNC_WAIT_MS, then 504 naming the job); `process-async` answers the job at once and calls the webhook on
 * completion with `markdown_file` and `attachments` in `data`; `cached` lists the processed sessions.
 */
export function sessionRoutes(api: ApiRouter, jobs: JobService, config: Config): void {
  const tags = ['Session'];
  const errors = {
    400: errorResponse(
      'A required field is missing (each is named), a URL is not absolute http(s), a language is unknown, or a name ' +
        'has no usable characters',
    ),
    404: errorResponse('No such template'),
  };
  const body = async (raw: unknown) => {
    const parameters = await sessionParameters(raw as Record<string, unknown>);
    return { parameters, webhook: parameters.webhook as { url: string; token?: string; jobId?: string } | undefined };
  };

  api.add({
    method: 'post',
    path: '/api/session/process',
    summary: 'Process a conference session (waits for the result)',
    tags,
    description:
      'Fetches the session page (main content as Markdown), transcribes `video_url` (a cached transcript of the same video and language is reused), ' +
      'reads the PDFs of `attachments_url` (a PDF or a page linking PDFs; page images become assets), fills the session template (`template`, default `Session`) in ' +
      '`target_language`, writes `sessions/<event>/<lang>/<track>/<filename>.md` (with `create_archive` a ZIP) and records the session for tracks, events and stories. ' +
      'Every path in the answer downloads at GET /api/event-job/files/{path}. Waits up to MEDIA_SYNC_WAIT_MS; past ' +
      'it, 504 with `details.job_id`.',
    body: sessionBody,
    responses: {
      200: { description: 'The processed session', content: { 'application/json': { schema: sessionResult } } },
      ...errors,
      403: errorResponse('A URL is not allowed (a private, loopback or metadata address)'),
      502: errorResponse('A URL could not be downloaded, or the model failed'),
      503: errorResponse('No language model is configured'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, input) => {
      const { parameters } = await body(input.body);
      // A session with a long recording takes long: no socket timeout cuts the wait.
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setKeepAlive(true, 30_000);
      await answerSync(ctx, jobs, { jobType: 'session', parameters }, config.MEDIA_SYNC_WAIT_MS);
    },
  });

  api.add({
    method: 'post',
    path: '/api/session/process-async',
    summary: 'Process a conference session as a job (webhook on completion)',
    tags,
    description:
      'The same processing as /api/session/process, as a job: answers its `job_id` at once; `webhook` (url, token, ' +
      'jobId) receives progress and the completion with `markdown_file` and `attachments` in `data`.',
    body: sessionBody,
    responses: {
      200: { description: 'Accepted', content: { 'application/json': { schema: sessionAccepted } } },
      ...errors,
    },
    handler: async (ctx, input) => {
      const { parameters, webhook } = await body(input.body);
      const { state } = await jobs.create({ jobType: 'session', parameters, webhook });
      ctx.body = {
        status: 'success',
        data: { job_id: state.job_id, status: state.status, message: 'Session processing started' },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/session/cached',
    summary: 'The processed sessions (cached session entries)',
    tags,
    responses: { 200: { description: 'Newest first', content: { 'application/json': { schema: cachedSessions } } } },
    handler: async (ctx) => {
      ctx.body = { status: 'success', data: { sessions: await listCachedSessions(jobs.store) } };
    },
  });
}
