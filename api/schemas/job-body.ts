import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { jobParamsByType, type JobParams, type JobType } from '../../core/jobs/job-params';

/**
 * A route's body to its job's parameters (issue 34), for the synchronous routes that run a job of a type the client
 * could also create at `/api/jobs/` (pdf, document, audio, video) or that the routes alone create (imageocr): one
 * transform, driven by the job type's schema (core/jobs/job-params.ts), so no route keeps a list of the fields.
 */

/** Job parameters the spec names otherwise in the routes' forms (§4.2, §4.7, §4.11, contract §12: `useCache`). */
const FORM_NAMES: Readonly<Record<string, string>> = { use_cache: 'useCache' };

/**
 * Parameters a job does not record while they hold their default (core/jobs/job-defaults.ts): the speech options of
 * audio and video jobs are assumed when absent, so the parameters of a job that does not ask for them read as before
 * they existed.
 */
const UNRECORDED: { readonly [T in JobType]?: Readonly<Record<string, unknown>> } = {
  audio: JOB_DEFAULTS.speech,
  video: JOB_DEFAULTS.speech,
};

/**
 * The parameters a route's validated `body` gives its job: every field the job type's schema declares, read under its
 * own name or its form name (`useCache` for `use_cache`), except absent and empty ones ('' is a form's empty field)
 * and those holding a default the job does not record. The route adds the input it names besides (an upload's key,
 * a path) and what it decides itself (`hosted`). The values are as the route's schema checked them, which is the one
 * check of these fields: `validateBodyParameters` (api/services/job-intake.ts) checks the rest.
 */
export function jobBodyParameters<T extends JobType>(
  jobType: T,
  body: Readonly<Record<string, unknown>>,
): Partial<JobParams<T>> {
  const unrecorded: Readonly<Record<string, unknown>> = UNRECORDED[jobType] ?? {};
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(jobParamsByType[jobType].shape)) {
    const value = body[key in body ? key : (FORM_NAMES[key] ?? key)];
    if (value === undefined || value === '' || unrecorded[key] === value) continue;
    out[key] = value;
  }
  return out as Partial<JobParams<T>>;
}
