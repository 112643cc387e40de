import type { Config } from '../../core/config';
import { AppError } from '../../core/errors';
import { listCachedSessions, sanitizeName, sessionPath } from '../../core/session-store';
import { loadTemplate, TEMPLATES_DIR } from '../../core/templates';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../route';
import { cachedSessions, sessionAccepted, sessionBody, sessionResult } from '../schemas/session.schemas';
import type { JobService } from '../services/jobs';
import { answerSync } from '../services/sync-answer';
import { validateParameters } from './jobs.routes';

/**
 * What a session request needs beyond its schema, checked before any job is queued: every name becomes a usable
 * path segment (400 naming the field: a name of dots and separators only), and the template exists in the target
 * language (404 TEMPLATE_NOT_FOUND). `path` prefixes the issue paths (`jobs.2.` in a batch).
 */
export async function checkSessionRequest(p: Record<string, unknown>, path: (string | number)[] = []): Promise<void> {
  const at = (field: string) => [...path, field].join('.');
  const issues: { path: string; message: string }[] = [];
  for (const field of ['event', 'session', 'track', 'filename']) {
    try {
      sanitizeName(field === 'filename' ? String(p[field]).replace(/\.md$/i, '') : String(p[field]), at(field));
    } catch {
      issues.push({ path: at(field), message: 'no usable characters once path separators, dots and control characters are removed' });
    }
  }
  if (issues.length) throw new AppError('VALIDATION_ERROR', `Unusable name(s): ${issues.map((i) => i.path).join(', ')}.`, { issues });
  // The layout must be buildable (the store's own check of every segment).
  sessionPath(String(p.event), String(p.target_language), String(p.track), String(p.filename));
  const template = String(p.template ?? 'Session');
  if (!(await loadTemplate(TEMPLATES_DIR, template, String(p.target_language)))) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(template)}.`, { template, ...(path.length ? { path: at('template') } : {}) });
  }
}

/** The `session` job's parameters of a request: validated (400, every missing field named), then checked. */
export async function sessionParameters(body: Record<string, unknown>, path: (string | number)[] = []): Promise<Record<string, unknown>> {
  const parameters = validateParameters('session', body, path);
  await checkSessionRequest(parameters, path);
  return parameters;
}

/**
 * Sessions (spec §4.6, contract §8): `process` runs a `session` job and waits like the media endpoints
 * (MEDIA_SYNC_WAIT_MS, then 504 naming the job); `process-async` answers the job at once and calls the webhook on
 * completion with `markdown_file` and `attachments` in `data`; `cached` lists the processed sessions.
 */
export function sessionRoutes(api: ApiRouter, jobs: JobService, config: Config): void {
  const tags = ['Session'];
  const errors = {
    400: errorResponse('A required field is missing (each is named), a URL is not absolute http(s), a language is unknown, or a name has no usable characters'),
    404: errorResponse('No such template'),
  };
  const body = async (raw: unknown) => {
    const parameters = await sessionParameters(raw as Record<string, unknown>);
    return { parameters, webhook: parameters.webhook as { url: string; token?: string; jobId?: string } | undefined };
  };

  api.add({
    method: 'post', path: '/api/session/process', summary: 'Process a conference session (waits for the result)', tags,
    description:
      'Fetches the session page (main content as Markdown), transcribes `video_url` (a cached transcript of the same video and language is reused), ' +
      'reads the PDFs of `attachments_url` (a PDF or a page linking PDFs; page images become assets), fills the session template (`template`, default `Session`) in ' +
      '`target_language`, writes `sessions/<event>/<lang>/<track>/<filename>.md` (with `create_archive` a ZIP) and records the session for tracks, events and stories. ' +
      'Every path in the answer downloads at GET /api/event-job/files/{path}. Waits up to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id`.',
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
    method: 'post', path: '/api/session/process-async', summary: 'Process a conference session as a job (webhook on completion)', tags,
    description: 'The same processing as /api/session/process, as a job: answers its `job_id` at once; `webhook` (url, token, jobId) receives progress and the completion with `markdown_file` and `attachments` in `data`.',
    body: sessionBody,
    responses: { 200: { description: 'Accepted', content: { 'application/json': { schema: sessionAccepted } } }, ...errors },
    handler: async (ctx, input) => {
      const { parameters, webhook } = await body(input.body);
      const { state } = await jobs.create({ jobType: 'session', parameters, webhook });
      ctx.body = { status: 'success', data: { job_id: state.job_id, status: state.status, message: 'Session processing started' } };
    },
  });

  api.add({
    method: 'get', path: '/api/session/cached', summary: 'The processed sessions (cached session entries)', tags,
    responses: { 200: { description: 'Newest first', content: { 'application/json': { schema: cachedSessions } } } },
    handler: async (ctx) => {
      ctx.body = { status: 'success', data: { sessions: await listCachedSessions(jobs.store) } };
    },
  });
}
