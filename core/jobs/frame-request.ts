/**
 * Video frame requests (contract §7): the sorted union of the `timestamps` and the `interval` grid, times past the
 * end dropped. Checked before any work (the API before a job exists), so a bad request never reaches ffmpeg. Pure.
 */
import { AppError } from '../errors';

export interface FrameRequest {
  timestamps: number[];
  interval: number | null;
}

const invalid = (message: string, details: Record<string, unknown>) =>
  new AppError('VALIDATION_ERROR', message, details);

const asNumber = (v: unknown): number =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;

/** `timestamps` as JSON or form data give them: an array, a JSON array string or a comma-separated string. */
function timestampList(raw: unknown): unknown[] {
  if (Array.isArray(raw)) return raw;
  if (typeof raw === 'number') return [raw];
  if (typeof raw !== 'string') throw invalid('timestamps must be a list of seconds', { field: 'timestamps' });
  const s = raw.trim();
  if (s.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(s);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // reported below
    }
    throw invalid('timestamps must be a list of seconds', { field: 'timestamps' });
  }
  return s === '' ? [] : s.split(',');
}

/**
 * Checks a frame request before any work (400 `VALIDATION_ERROR` with `details.field`): at least one of
 * `timestamps` (non-negative seconds) and `interval` (seconds above 0), and no more timestamps than `maxFrames`.
 */
export function parseFrameRequest(timestamps: unknown, interval: unknown, maxFrames: number): FrameRequest {
  const none = (v: unknown) => v === undefined || v === null || v === '';
  if (none(timestamps) && none(interval)) {
    throw invalid('frames need timestamps, an interval or both', {
      field: 'frames',
      required: ['timestamps', 'interval'],
    });
  }
  const times = none(timestamps) ? [] : timestampList(timestamps).map(asNumber);
  const bad = times.findIndex((t) => !Number.isFinite(t) || t < 0);
  if (bad >= 0)
    throw invalid('timestamps must be non-negative numbers of seconds', { field: 'timestamps', index: bad });
  if (times.length > maxFrames) {
    throw invalid(`at most ${maxFrames} frames per request`, {
      field: 'timestamps',
      limit: maxFrames,
      requested: times.length,
    });
  }
  const step = none(interval) ? null : asNumber(interval);
  if (step !== null && !(Number.isFinite(step) && step > 0))
    throw invalid('interval must be a number of seconds above 0', { field: 'interval' });
  return { timestamps: times, interval: step };
}

/** Rounds to the microsecond, ffmpeg's time resolution, so `0.1 * 3` and `0.3` are one time. */
const us = (t: number) => Math.round(t * 1e6) / 1e6;

/**
 * The frame times of a checked request for a video of `duration` seconds: the sorted union of the timestamps and
 * the grid 0, interval, 2·interval…, without times at or past the end. More than `maxFrames` is a 400. Pure.
 */
export function frameTimes(request: FrameRequest, duration: number, maxFrames: number): number[] {
  const times = new Set(request.timestamps.map(us).filter((t) => t < duration));
  if (request.interval !== null) {
    const steps = Math.ceil(duration / request.interval);
    if (steps > maxFrames) {
      throw invalid(`at most ${maxFrames} frames per request`, {
        field: 'interval',
        limit: maxFrames,
        requested: steps,
      });
    }
    for (let k = 0; k < steps; k++) {
      const t = us(k * request.interval);
      if (t < duration) times.add(t);
    }
  }
  if (times.size > maxFrames) {
    throw invalid(`at most ${maxFrames} frames per request`, {
      field: 'frames',
      limit: maxFrames,
      requested: times.size,
    });
  }
  return [...times].sort((a, b) => a - b);
}
