import { AppError, type ErrorCode } from '../../core/errors';

/** Why a PDF could not be processed; `reason` is stable and safe to show to clients (`details.reason`). */
export type PdfErrorReason =
  'encrypted' | 'corrupt' | 'not_pdf' | 'empty' | 'timeout' | 'too_large' | 'page_out_of_range';

/**
 * An input problem with a PDF, carrying the contract §1 error code the edge answers with:
 * `UNPROCESSABLE_INPUT` (422) for encrypted, corrupt, empty, unparseable-in-time or too-memory-hungry files,
 * `INVALID_FORMAT` (400)
 * for bytes that are not a PDF at all, `VALIDATION_ERROR` (400) for a page outside the document.
 * An `AppError`, so the activity error boundary fails the job with it at once: the same bytes give the same answer.
 */
export class PdfError extends AppError {
  constructor(
    code: ErrorCode,
    readonly reason: PdfErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    // Contract §1: INVALID_FORMAT carries `details.error_type` and `details.supported_formats`.
    const extra = code === 'INVALID_FORMAT' ? { error_type: reason, supported_formats: ['pdf'] } : {};
    super(code, message, { reason, ...extra }, options);
    this.name = 'PdfError';
  }
}
