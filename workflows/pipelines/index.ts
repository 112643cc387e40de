import { ApplicationFailure } from '@temporalio/workflow';
import type { JobInput, LogLevel } from '../definitions';
import { transformerPipeline } from './transformer.pipeline';

/** What a pipeline may do to its job: report progress and write log lines. */
export interface PipelineContext {
  input: JobInput;
  progress(step: string, percent: number, message: string): void;
  log(level: LogLevel, message: string): void;
}

export type Pipeline = (ctx: PipelineContext) => Promise<Record<string, unknown>>;

const PIPELINES: Partial<Record<JobInput['jobType'], Pipeline>> = {
  transformer: transformerPipeline,
};

/** Dispatches on the job type. A type without a pipeline fails the job with `NOT_IMPLEMENTED`. */
export async function runPipeline(ctx: PipelineContext): Promise<Record<string, unknown>> {
  const pipeline = PIPELINES[ctx.input.jobType];
  if (!pipeline) {
    throw ApplicationFailure.nonRetryable(
      `Job type '${ctx.input.jobType}' has no processing pipeline in this version of the service.`,
      'NOT_IMPLEMENTED',
      { job_type: ctx.input.jobType },
    );
  }
  return pipeline(ctx);
}
