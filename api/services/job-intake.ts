import type { z } from 'zod';
import { writeBlobJson, type BlobStore } from '../../core/stores/blob-store';
import { AppError, validationMessage } from '../../core/errors';
import {
  INLINE_PARAMS_BYTES,
  jobSpec,
  parseJobParameters,
  summariseParameters,
  type JobParams,
  type JobSpec,
  type JobType,
  type SessionParams,
} from '../../core/jobs/job-params';
import { jobParametersKey } from '../../core/stores/records';
import { sanitizeName, sessionPath } from '../../core/stores/session-store';
import { loadTemplate, TEMPLATES_DIR } from '../../core/templates';

// Job parameters as the routes check them before anything is queued (the job type's schema, and what a session
// request needs beyond it; shared by the job, session, legacy event-job and media routes), and as a job's workflow
// input carries them.

/**
 * Validates `parameters` against the job type's schema (core/jobs/job-params.ts) and applies the defaults they record:
 * the one validation of a job's parameters. Issues are reported under `parameters.…` (400 VALIDATION_ERROR).
 */
export function validateParameters<T extends JobType>(
  jobType: T,
  parameters: unknown,
  path: (string | number)[] = ['parameters'],
): JobParams<T> {
  return parsed(parseJobParameters(jobType, parameters), path);
}

/**
 * A job's parameters from a route's validated body (`jobBodyParameters`, api/schemas/job-body.ts) and what the route
 * adds (`fromRoute`: the input it names, such as an upload's key and name or a temporary path, and what it decides
 * itself, such as `hosted`), validated as `validateParameters` validates them except for the fields taken from the
 * body: the route's schema checked those already, with the job's definitions of them or stricter ones (a form's
 * integers have a maximum, its URLs a scheme), so each field is checked once. What is left is checked here: what the
 * route adds, the job's rules across its fields (one input, the page range, the speakers) and the defaults it
 * records; issues as `validateParameters` reports them.
 */
export function validateBodyParameters<T extends JobType>(
  jobType: T,
  fromBody: Partial<JobParams<T>>,
  fromRoute: Record<string, unknown> = {},
): JobParams<T> {
  return parsed(parseJobParameters(jobType, { ...fromRoute, ...fromBody }, Object.keys(fromBody)), ['parameters']);
}

function parsed<P>(r: z.ZodSafeParseResult<P>, path: (string | number)[]): P {
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: [...path, ...i.path].map(String).join('.'), message: i.message }));
  throw new AppError('VALIDATION_ERROR', validationMessage(issues), { issues });
}

/** A job of a type the request names (`job_type`): its type with its validated parameters. */
export function validateJob<T extends JobType>(
  jobType: T,
  parameters: unknown,
  path: (string | number)[] = ['parameters'],
): JobSpec<T> {
  return jobSpec(jobType, validateParameters(jobType, parameters, path));
}

/**
 * What a session request needs beyond its schema, checked before any job is queued: every name becomes a usable
 * path segment (400 naming the field: a name of dots and separators only), and the template exists in the target
 * language (404 TEMPLATE_NOT_FOUND). `path` prefixes the issue paths (`jobs.2.` in a batch).
 */
export async function checkSessionRequest(p: SessionParams, path: (string | number)[] = []): Promise<void> {
  const at = (field: string) => [...path, field].join('.');
  const issues: { path: string; message: string }[] = [];
  for (const field of ['event', 'session', 'track', 'filename'] as const) {
    try {
      sanitizeName(field === 'filename' ? p.filename.replace(/\.md$/i, '') : p[field], at(field));
    } catch {
      issues.push({
        path: at(field),
        message: 'no usable characters once path separators, dots and control characters are removed',
      });
    }
  }
  if (issues.length)
    throw new AppError('VALIDATION_ERROR', `Unusable name(s): ${issues.map((i) => i.path).join(', ')}.`, { issues });
  // The layout must be buildable (the store's own check of every segment).
  sessionPath(p.event, p.target_language, p.track, p.filename);
  const template = p.template;
  if (!(await loadTemplate(TEMPLATES_DIR, template, p.target_language))) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(template)}.`, {
      template,
      ...(path.length ? { path: at('template') } : {}),
    });
  }
}

/** The `session` job's parameters of a request: validated (400, every missing field named), then checked. */
export async function sessionParameters(body: unknown, path: (string | number)[] = []): Promise<SessionParams> {
  const parameters = validateParameters('session', body, path);
  await checkSessionRequest(parameters, path);
  return parameters;
}

/**
 * The parameters a job's workflow input carries: as they are, or, past `INLINE_PARAMS_BYTES`, a summary, with the
 * full parameters in the job's folder (`jobParametersKey`, read back by the activities' `fullParameters`), so
 * workflow history stays small.
 */
export async function offloadParameters<P extends Record<string, unknown>>(
  store: BlobStore,
  jobId: string,
  parameters: P,
): Promise<P> {
  if (Buffer.byteLength(JSON.stringify(parameters)) <= INLINE_PARAMS_BYTES) return parameters;
  await writeBlobJson(store, jobParametersKey(jobId), parameters);
  return summariseParameters(parameters);
}
