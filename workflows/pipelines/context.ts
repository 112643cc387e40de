import type { JobInput, LogLevel } from '../definitions';

/** What a pipeline may do to its job: report progress and write log lines. */
export interface PipelineContext {
  input: JobInput;
  progress(step: string, percent: number, message: string): void;
  log(level: LogLevel, message: string): void;
}

export type Pipeline = (ctx: PipelineContext) => Promise<Record<string, unknown>>;
