import { ZodError } from 'zod';
import { AppError, ERROR_STATUS, isErrorCode, validationMessage, type ErrorBody } from '../core/errors';

export interface ApiError {
  status: number;
  body: ErrorBody;
  /** True when the error is ours to log as a failure (5xx). */
  unexpected: boolean;
}

function zodIssues(err: ZodError): { path: string; message: string }[] {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * Maps anything thrown on the request path to the contract's error envelope. Pure: no logging, no I/O.
 * Client-safe messages only; an unknown error becomes a 500 with a generic message.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof AppError) {
    return {
      status: err.status,
      body: { code: err.code, message: err.message, details: err.details },
      unexpected: err.status >= 500,
    };
  }
  if (err instanceof ZodError) {
    const issues = zodIssues(err);
    return {
      status: 400,
      body: { code: 'VALIDATION_ERROR', message: validationMessage(issues), details: { issues } },
      unexpected: false,
    };
  }
  const e = (err ?? {}) as {
    name?: string;
    status?: number;
    statusCode?: number;
    httpCode?: number;
    type?: string;
    code?: string | number;
    limit?: number;
    expose?: boolean;
    message?: string;
  };
  if (e.name === 'ServiceError' || e.name === 'ConnectionError' || e.name === 'TransportError') {
    return {
      status: 503,
      body: {
        code: 'UNAVAILABLE',
        message: 'The job engine (Temporal) is unreachable; try again shortly.',
        details: {},
      },
      unexpected: false,
    };
  }
  if (e.name === 'WorkflowNotFoundError') {
    return { status: 404, body: { code: 'JOB_NOT_FOUND', message: 'No such job.', details: {} }, unexpected: false };
  }
  const status = e.status ?? e.statusCode ?? e.httpCode;
  if (status === 413 || e.type === 'entity.too.large') {
    const details: Record<string, unknown> = {};
    if (typeof e.limit === 'number') details.limit_bytes = e.limit;
    return {
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.', details },
      unexpected: false,
    };
  }
  if (e.type === 'entity.parse.failed' || (status === 400 && e.name === 'SyntaxError')) {
    return {
      status: 400,
      body: {
        code: 'VALIDATION_ERROR',
        message: 'The request body is not valid JSON.',
        details: { issues: [{ path: '', message: 'malformed JSON' }] },
      },
      unexpected: false,
    };
  }
  if (status === 415 || e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
    return {
      status: 415,
      body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type or encoding.', details: {} },
      unexpected: false,
    };
  }
  if (status === 405) {
    return {
      status: 405,
      body: { code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed on this path.', details: {} },
      unexpected: false,
    };
  }
  if (status === 404) {
    return { status: 404, body: { code: 'NOT_FOUND', message: 'Not found.', details: {} }, unexpected: false };
  }
  if (status && status >= 400 && status < 500) {
    // Other client errors raised by libraries (malformed multipart, aborted request...).
    const code = isErrorCode(e.code) ? e.code : 'VALIDATION_ERROR';
    const s = isErrorCode(e.code) ? ERROR_STATUS[e.code] : 400;
    return {
      status: s,
      body: {
        code,
        message: e.expose && e.message ? e.message : 'The request could not be read.',
        details: { issues: [] },
      },
      unexpected: false,
    };
  }
  return {
    status: 500,
    body: { code: 'INTERNAL_ERROR', message: 'An internal error occurred.', details: {} },
    unexpected: true,
  };
}
