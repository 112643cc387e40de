import { executeChild, patched, workflowInfo } from '@temporalio/workflow';
import { CHILD_JOBS_PER_SESSION } from '../../core/jobs/fanout';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
import type { JobParams } from '../../core/jobs/job-params';
import { jobInput } from '../definitions';
import { boundedMap } from '../fanout';
import { activitiesFor, downloadRoute, modelRoute } from '../routing';
import type { PipelineContext } from './context';

/**
 * The session job type (spec §4.6, issue #15): plan → the page (SSRF-guarded download, main content to Markdown) →
 * the video's transcript (a `video` child job, or the transcript cache) → the attachments (downloaded, each read by
 * a `pdf` child job, pages rendered as assets) → the session template → the files and results → the session store.
 * Each step is an activity with its own retry policy whose output is kept under the job, and the child jobs keep
 * their own steps, so a retry, a dead worker or a `restart` continues after the last finished step.
 */
export async function sessionPipeline(ctx: PipelineContext<'session'>): Promise<Record<string, unknown>> {
  const { jobId, parameters } = ctx.input;
  // Each step on its queue with its options (activity-table.ts): downloads and file writes heartbeat throughout.
  const steps = activitiesFor();
  const plan = await steps.planSession({ jobId, parameters });
  ctx.progress('prepare', 2, 'Session planned');

  ctx.progress('page', 5, 'Reading the session page');
  const page = await activitiesFor({ download: downloadRoute() }).fetchSessionPage({ jobId, parameters });
  ctx.log(
    'info',
    `Session page: ${page.chars} characters of Markdown${page.reused ? ' (kept from earlier work)' : ''}`,
  );

  if (parameters.video_url) {
    if (!plan.transcriptDone) {
      ctx.progress('video', 10, 'Transcribing the video');
      const video = {
        url: parameters.video_url,
        ...(plan.hosted ? { hosted: true } : {}),
        source_language: parameters.source_language,
        target_language: parameters.source_language,
        use_cache: parameters.use_cache,
        // The results' segments with their words' times: the session's grounding and chunks are timed by them
        // (activities/session-sources.ts). Only the child's input changes, not this workflow's commands.
        word_timestamps: true,
      };
      ctx.log('info', `Video transcribed by job ${plan.videoJobId}`);
      await childJob(plan.videoJobId, 'video', video);
    }
    const t = await steps.collectSessionTranscript({ jobId, parameters, videoJobId: plan.videoJobId });
    ctx.log('info', `Transcript: ${t.chars} characters${t.from_cache ? ' (from the transcript cache)' : ''}`);
  }

  if (parameters.attachments_url) {
    ctx.progress('attachments', 45, 'Downloading the attachments');
    const { files: pdfs } = await activitiesFor({ download: downloadRoute() }).fetchSessionAttachments({
      jobId,
      parameters,
    });
    ctx.log('info', `${pdfs.length} attachment(s)`);
    if (!plan.attachmentsDone) {
      ctx.progress('attachments', 50, 'Reading the attachments');
      const read = (f: (typeof pdfs)[number]) =>
        childJob(f.pdfJobId, 'pdf', {
          file_key: f.key,
          original_name: `${f.name}.pdf`,
          extraction_method: 'combined',
          use_cache: parameters.use_cache,
        });
      // A few attachments at once (each child bounds its own pages); runs recorded before the bound started all.
      if (patched('bounded-fanout')) await boundedMap(pdfs, CHILD_JOBS_PER_SESSION, read);
      else await Promise.all(pdfs.map(read));
    }
    if (pdfs.length) {
      const pages = await steps.renderSessionPages({ jobId, parameters, files: pdfs });
      ctx.log('info', `${pages.images} page image(s)`);
    }
    await steps.collectSessionAttachments({ jobId, files: pdfs });
  }

  ctx.progress('template', 70, 'Filling the session template');
  const model = activitiesFor({ jobId, model: modelRoute(true) });
  const filled = await model.fillSessionTemplate({ jobId, parameters });
  ctx.log('info', `Template filled; topic ${JSON.stringify(filled.topic)}, ${filled.tags.length} tag(s)`);

  ctx.progress('write', 92, 'Writing the session files');
  const out = await steps.writeSessionOutput({ jobId, parameters });
  ctx.progress('record', 97, 'Recording the session');
  await steps.recordSession({ jobId, parameters });
  return out.results;
}

/**
 * A job of another type run for this one (a `video` or `pdf` job): its own workflow and record under the id the
 * plan kept, so its finished steps are reused when this job is retried or restarted. A failure fails this job with
 * the child's error code.
 */
async function childJob<T extends 'video' | 'pdf'>(jobId: string, jobType: T, parameters: JobParams<T>): Promise<void> {
  const input = jobInput(jobType, stripUndefined(parameters), { jobId, createdAt: new Date().toISOString(), run: 1 });
  await executeChild('jobWorkflow', {
    workflowId: jobId,
    args: [input],
    taskQueue: workflowInfo().taskQueue,
    typedSearchAttributes: jobSearchAttributes({ jobType }),
  });
}

const stripUndefined = <P extends object>(o: P): P =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as P;
