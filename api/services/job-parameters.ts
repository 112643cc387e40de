import { writeBlobJson, type BlobStore } from '../../core/blob-store';
import { AppError, validationMessage } from '../../core/errors';
import { INLINE_PARAMS_BYTES, jobParamsByType, summariseParameters } from '../../core/job-params';
import { jobParametersKey } from '../../core/records';
import { sanitizeName, sessionPath } from '../../core/session-store';
import { loadTemplate, TEMPLATES_DIR } from '../../core/templates';
import type { JobType } from '../../workflows/definitions';

// Job parameters as the routes check them before anything is queued (the job type's schema, and what a session
// request needs beyond it; shared by the job, session, legacy event-job and media routes), and as a job's workflow
// input carries them.

/** Validates `parameters` against the job type's schema; issues are reported under `parameters.…`. */
export function validateParameters(
  jobType: JobType,
  parameters: Record<string, unknown>,
  path: (string | number)[] = ['parameters'],
): Record<string, unknown> {
  const schema = jobParamsByType[jobType as keyof typeof jobParamsByType];
  if (!schema) return parameters;
  const r = schema.safeParse(parameters);
  if (r.success) return r.data as Record<string, unknown>;
  const issues = r.error.issues.map((i) => ({ path: [...path, ...i.path].map(String).join('.'), message: i.message }));
  throw new AppError('VALIDATION_ERROR', validationMessage(issues), { issues });
}

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
      issues.push({
        path: at(field),
        message: 'no usable characters once path separators, dots and control characters are removed',
      });
    }
  }
  if (issues.length)
    throw new AppError('VALIDATION_ERROR', `Unusable name(s): ${issues.map((i) => i.path).join(', ')}.`, { issues });
  // The layout must be buildable (the store's own check of every segment).
  sessionPath(String(p.event), String(p.target_language), String(p.track), String(p.filename));
  const template = String(p.template ?? 'Session');
  if (!(await loadTemplate(TEMPLATES_DIR, template, String(p.target_language)))) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(template)}.`, {
      template,
      ...(path.length ? { path: at('template') } : {}),
    });
  }
}

/** The `session` job's parameters of a request: validated (400, every missing field named), then checked. */
export async function sessionParameters(
  body: Record<string, unknown>,
  path: (string | number)[] = [],
): Promise<Record<string, unknown>> {
  const parameters = validateParameters('session', body, path);
  await checkSessionRequest(parameters, path);
  return parameters;
}

/**
 * The parameters a job's workflow input carries: as they are, or, past `INLINE_PARAMS_BYTES`, a summary, with the
 * full parameters in the job's folder (`jobParametersKey`, read back by the activities' `fullParameters`), so
 * workflow history stays small.
 */
export async function offloadParameters(
  store: BlobStore,
  jobId: string,
  parameters: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (Buffer.byteLength(JSON.stringify(parameters)) <= INLINE_PARAMS_BYTES) return parameters;
  await writeBlobJson(store, jobParametersKey(jobId), parameters);
  return summariseParameters(parameters);
}
