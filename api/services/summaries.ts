import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { loadTemplate, TEMPLATES_DIR } from '../../core/templates';
import type { SummaryJobType, SummaryParams } from '../../core/jobs/job-params';
import type { JobService } from './jobs';
import { answerSync } from './sync-answer';

export interface SummaryDeps {
  jobs: JobService;
  config: Config;
}

/**
 * Runs a summary over the session store as a job of `jobType` and waits for it like the media endpoints
 * (`MEDIA_SYNC_WAIT_MS`, then 504 naming the job). Callers check their names exist first (404); here the template
 * (404) and the model (503) are checked, in the contract's order, before anything is started.
 */
/** The shipped templates that shape each answer when the request names none (`summarize_all` has no single answer). */
const DEFAULT_TEMPLATES: Record<SummaryJobType, string> = {
  track_summary: 'TrackSummary',
  event_summary: 'EventSummary',
  story: 'Story',
};

export async function runSummary(
  ctx: Context,
  deps: SummaryDeps,
  jobType: SummaryJobType,
  parameters: Partial<SummaryParams>,
): Promise<void> {
  const template =
    parameters.template ?? (parameters.mode === 'summarize_all' ? undefined : DEFAULT_TEMPLATES[jobType]);
  if (
    typeof template === 'string' &&
    !(await loadTemplate(TEMPLATES_DIR, template, String(parameters.target_language ?? '')))
  ) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template named ${JSON.stringify(template)}.`, { template });
  }
  if (!deps.config.llm) {
    throw new AppError(
      'PROVIDER_NOT_CONFIGURED',
      'Summaries need a language model: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.',
      { job_type: jobType },
    );
  }
  // A long map-reduce takes long: no socket timeout cuts the wait.
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setKeepAlive(true, 30_000);
  await answerSync(
    ctx,
    deps.jobs,
    {
      jobType,
      parameters: { ...parameters, ...(template ? { template } : {}), chunk_chars: deps.config.SUMMARY_CHUNK_CHARS },
    },
    deps.config.MEDIA_SYNC_WAIT_MS,
  );
}
