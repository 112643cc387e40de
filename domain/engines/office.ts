/**
 * The office engine (LibreOffice headless, issue 35): converts what the native readers cannot read (DOC, XLS, PPT,
 * RTF) to the open XML format they read, and renders any document to PDF for `extraction_method=render` and for
 * page counts. The worker builds the real one (providers/office/libreoffice.ts); it never runs macros and never
 * fetches linked content.
 */

/** The formats a conversion writes. */
export type OfficeTarget = 'docx' | 'xlsx' | 'pptx' | 'pdf';

export interface OfficeCallOptions {
  /** Aborts the call: the conversion's process is killed, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface OfficeEngine {
  /**
   * Converts the file at `inputPath` to `target`, written into `outDir`; resolves with the written file's path.
   * Rejects with an `AppError` `UNPROCESSABLE_INPUT` (details.reason `encrypted`, `password_protected`, `corrupt`)
   * for a file LibreOffice cannot open, and with a plain Error when the engine itself failed (crashed, stalled).
   */
  convert(inputPath: string, target: OfficeTarget, outDir: string, opts?: OfficeCallOptions): Promise<string>;
  /** Stops the engine's processes (the worker's shutdown). */
  close(): Promise<void>;
}
