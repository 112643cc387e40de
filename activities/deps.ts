import type { Client } from '@temporalio/client';
import type { Config } from '../core/config/config';
import type { TaskQueues } from '../core/jobs/ids';
import type { Logger } from '../core/runtime/logger';
import type { BlobStore, LlmProvider, MediaEngine, OcrEngine, PdfEngine, SpeechProvider } from '../domain/engines';
import type { OfficeEngine } from '../domain/engines/office';
import type { BatchInput, JobStatus } from '../workflows/definitions';

/** What every activity is built from (injected by the worker). Its own module, so no activity file imports index.ts. */
export interface ActivityDeps {
  config: Config;
  logger: Logger;
  store: BlobStore;
  queues: TaskQueues;
  /** For activities that signal or start workflows (a batch reopened by a restarted job). */
  temporalClient?: Client;
  /** The language model, or null when none is configured (operations that need one fail with 503). */
  llm?: LlmProvider | null;
  /** Speech to text (`SPEECH_PROVIDER`), or null when none is available (transcription fails with 503). */
  speech?: SpeechProvider | null;
  /** The PDF engine (text layer, page images): activities reach pdf.js and poppler only through it. */
  pdf: PdfEngine;
  /** The OCR engine (tesseract): activities reach it only through this. */
  ocr: OcrEngine;
  /** The media engine (ffprobe, ffmpeg): activities reach it only through this. */
  media: MediaEngine;
  /**
   * The office engine (LibreOffice): DOC, XLS, PPT and RTF, and `extraction_method=render`. Null where none is
   * installed: those documents then fail with PROVIDER_NOT_CONFIGURED, the others are read all the same.
   */
  office?: OfficeEngine | null;
  /**
   * Starts a closed batch's workflow again with a job's `jobFinished` signal (a job restarted after its batch
   * finished). Built by the worker, which knows the workflow definitions; activities do not import workflows.
   */
  reopenBatch?: (input: BatchInput, report: BatchReport) => Promise<void>;
}

/** What a job's run tells its batch: it runs again (`processing`, a restart) or it ended. */
export interface BatchReport {
  index: number;
  status: JobStatus;
  /** The run reporting (absent from runs started before runs were numbered in reports). */
  run?: number;
  jobId?: string;
}
