import type { Context } from 'koa';
import { AppError } from '../../core/errors';
import type { JobState } from '../../workflows/definitions';

/** The longest `wait_ms` a request may ask for (contract §10). */
export const MAX_WAIT_MS = 300_000;

/**
 * How a client wants a synchronous endpoint's work answered (contract §3): `Prefer: respond-async` (RFC 7240) or
 * `wait_ms=0` → 202 with the job at once; `wait_ms=N` → wait up to N ms, then 202 with the job (not 504).
 */
export interface AsyncPreference {
  respondAsync: boolean;
  waitMs?: number;
}

/**
 * Reads `Prefer` and the `wait_ms` query parameter; a `wait_ms` that is not a whole number from 0 to 300000 is a 400.
 */
export function readAsyncPreference(ctx: Context): AsyncPreference {
  const prefer = ctx.get('Prefer');
  const respondAsync = prefer.split(',').some((p) => p.trim().split(';')[0].trim().toLowerCase() === 'respond-async');
  const raw = ctx.query.wait_ms;
  if (raw === undefined) return { respondAsync };
  const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  const waitMs = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(waitMs >= 0 && waitMs <= MAX_WAIT_MS)) {
    throw new AppError('VALIDATION_ERROR', `wait_ms must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}.`, {
      issues: [{ path: 'wait_ms', message: `a whole number from 0 to ${MAX_WAIT_MS}` }],
    });
  }
  return { respondAsync, waitMs };
}

/**
 * Not an error: the job was accepted and the client asked not to wait for it (or no longer). The edge answers 202
 * with `data.job_id` (and `Preference-Applied: respond-async` when the client asked with `Prefer`). A request's
 * upload stays with the job.
 */
export class JobAccepted extends Error {
  constructor(
    readonly state: Pick<JobState, 'job_id' | 'status'>,
    readonly preferenceApplied: boolean,
  ) {
    super(`job ${state.job_id} accepted`);
    this.name = 'JobAccepted';
  }
}
