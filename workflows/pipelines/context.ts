import type { JobInput, JobType, LogLevel } from '../definitions';

/** What a pipeline may do to its job of type `T`: read its input, report progress and write log lines. */
export interface PipelineContext<T extends JobType = JobType> {
  input: JobInput<T>;
  progress(step: string, percent: number, message: string): void;
  log(level: LogLevel, message: string): void;
}

/** Runs a job of type `T` (one of `T`, for a pipeline that serves several) and answers its results. */
export type Pipeline<T extends JobType> = (ctx: PipelineContext<T>) => Promise<Record<string, unknown>>;
