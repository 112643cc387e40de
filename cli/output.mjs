import { UsageError } from './args.mjs';
import { ApiError } from './client.mjs';

const TEXT_FIELDS = [
  'markdown',
  'extracted_text',
  'transformed_text',
  'output_text',
  'translated_text',
  'text',
  'summary',
  'story',
];

/**
 * Prints an answer. `--json`: the JSON envelope on one line, nothing else on stdout. Otherwise the answer's main
 * text when it has one (the Markdown, the extracted text, the transcript), else the data as indented JSON.
 */
export function printResult(body, json, { whole = false } = {}) {
  if (json) {
    process.stdout.write(`${JSON.stringify(body)}\n`);
    return;
  }
  const data = body && typeof body === 'object' ? (body.data ?? body) : body;
  const inner =
    data && typeof data === 'object' && data.results && typeof data.results === 'object' ? data.results : data;
  const text =
    whole || !inner || typeof inner !== 'object'
      ? undefined
      : TEXT_FIELDS.map((f) => inner[f]).find((v) => typeof v === 'string');
  if (typeof data === 'string') process.stdout.write(data.endsWith('\n') ? data : `${data}\n`);
  else if (text !== undefined) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  else process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
}

/** An error: `docproc: CODE (status): message` on stderr, or with `--json` the error envelope on stdout. */
export function printError(err, json) {
  const code = err instanceof ApiError ? err.code : err instanceof UsageError ? 'USAGE' : 'CLIENT_ERROR';
  const message = err instanceof Error ? err.message : String(err);
  const details = err instanceof ApiError ? err.details : undefined;
  if (json) {
    const error = {
      code,
      message,
      ...(details !== undefined ? { details } : {}),
      ...(err?.jobId ? { job_id: err.jobId } : {}),
    };
    process.stdout.write(`${JSON.stringify({ status: 'error', error })}\n`);
    return;
  }
  const where =
    err instanceof ApiError && err.status ? ` (${err.status})` : err?.jobFailed ? ` (job ${err.jobId} failed)` : '';
  process.stderr.write(`docproc: ${code}${where}: ${message}\n`);
}

/** Exit codes by kind, so scripts can branch without parsing: see the usage text. */
export function exitCodeOf(err) {
  if (err instanceof UsageError) return 2;
  if (!(err instanceof ApiError)) return 1;
  if (err.jobFailed) return 1;
  if (err.code === 'UNREACHABLE') return 7;
  const s = err.status;
  if (s === 401 || s === 403) return 3;
  if (s === 404) return 4;
  if (s === 429 || s >= 500) return 6;
  if (s >= 400) return 5;
  return 1;
}
