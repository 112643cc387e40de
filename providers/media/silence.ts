/**
 * Where to cut long audio: ffmpeg's `silencedetect` finds the pauses, `planChunks` picks one near each boundary of
 * a chunk of about the target length, so no cut falls inside a word and every sample lands in exactly one chunk.
 * There is no cap on the number of chunks.
 */
import type { ChunkSpan } from '../../domain/engines/media';
import { decodeError, runFfmpeg } from './audio';
import type { MediaToolOptions } from './probe';
import { localInput } from './input-guard';

export interface Silence {
  start: number;
  end: number;
}

/**
 * Default level under which sound counts as silence, and the shortest pause that counts (shorter than any sentence
 * break).
 */
export const SILENCE_NOISE_DB = -30;
export const SILENCE_MIN_SECONDS = 0.3;
/** Cuts are looked for within this share of the target length either side of each boundary. */
export const CUT_WINDOW = 0.15;

/**
 * Parses the `lavfi.silence_*` lines `ametadata=mode=print` writes for `silencedetect`. A silence still open when
 * the audio ends (ffmpeg 5.1 prints no `silence_end` for it) ends at `duration`. Pure.
 */
export function parseSilences(output: string, duration: number): Silence[] {
  const silences: Silence[] = [];
  let open: number | null = null;
  for (const m of output.matchAll(/lavfi\.silence_(start|end)=(-?[\d.]+)/g)) {
    const t = Math.min(Math.max(Number(m[2]), 0), duration);
    if (m[1] === 'start') open = t;
    else if (open !== null) {
      if (t > open) silences.push({ start: open, end: t });
      open = null;
    }
  }
  if (open !== null && duration > open) silences.push({ start: open, end: duration });
  return silences;
}

/**
 * Runs `silencedetect` over a (16 kHz mono) WAV of `duration` seconds. Output goes to stdout, so no count is cut short.
 */
export async function findSilences(
  wavPath: string,
  duration: number,
  opts: MediaToolOptions & { noiseDb?: number; minSilence?: number } = {},
): Promise<Silence[]> {
  const filter = `silencedetect=noise=${opts.noiseDb ?? SILENCE_NOISE_DB}dB:duration=${opts.minSilence ?? SILENCE_MIN_SECONDS},ametadata=mode=print:file=-`;
  try {
    const { stdout } = await runFfmpeg([...localInput(wavPath), '-af', filter, '-f', 'null', '-'], {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 30 * 60_000,
    });
    return parseSilences(stdout.toString('utf8'), duration);
  } catch (err) {
    throw decodeError(err, 'Looking for pauses');
  }
}

const ms = (t: number) => Math.round(t * 1000) / 1000;

/**
 * Splits `[0, duration]` into the fewest chunks of at most about `targetSec` (one when the audio is no longer than
 * the target plus the window), with boundaries spread evenly and each moved to the middle of the silence nearest
 * to it within ±`window`·target (clamped into that window when the silence is longer). Only a boundary with no
 * silence near stays where it was. Chunks cover the range exactly, with no gap or overlap; inner cuts are whole
 * milliseconds. Pure.
 */
export function planChunks(
  duration: number,
  silences: readonly Silence[],
  targetSec: number,
  window = CUT_WINDOW,
): ChunkSpan[] {
  if (!(duration > 0)) return [];
  if (!(targetSec > 0)) throw new RangeError('planChunks: the target length must be positive');
  const count = duration <= targetSec * (1 + window) ? 1 : Math.ceil(duration / targetSec);
  const reach = window * targetSec;
  const spans: ChunkSpan[] = [];
  let start = 0;
  for (let i = 1; i < count; i++) {
    const ideal = (i * duration) / count;
    const lo = Math.max(ideal - reach, start);
    const hi = ideal + reach;
    let best: { at: number; distance: number; length: number } | null = null;
    for (const s of silences) {
      if (s.end < lo || s.start > hi) continue;
      const at = Math.min(Math.max((s.start + s.end) / 2, lo), hi);
      const distance = Math.abs(at - ideal);
      const length = s.end - s.start;
      if (!best || distance < best.distance || (distance === best.distance && length > best.length))
        best = { at, distance, length };
    }
    const cut = ms(best?.at ?? ideal);
    if (cut <= start || cut >= duration) continue;
    spans.push({ start, end: cut, atSilence: best !== null });
    start = cut;
  }
  spans.push({ start, end: duration, atSilence: true });
  return spans;
}

/**
 * Plans the chunks of a WAV: pauses are looked for at the default level, and again at louder levels only when some
 * boundary found none (a noisy room never drops to -30 dB). Returns the plan whose cuts lie in silence most often.
 */
export async function planChunksAtSilence(
  wavPath: string,
  duration: number,
  targetSec: number,
  opts: MediaToolOptions = {},
): Promise<ChunkSpan[]> {
  let plan = planChunks(duration, [], targetSec);
  if (plan.length === 1) return plan;
  const atSilence = (p: ChunkSpan[]) => p.filter((c) => c.atSilence).length;
  for (const noiseDb of [SILENCE_NOISE_DB, SILENCE_NOISE_DB + 5, SILENCE_NOISE_DB + 10]) {
    const next = planChunks(duration, await findSilences(wavPath, duration, { ...opts, noiseDb }), targetSec);
    if (atSilence(next) > atSilence(plan)) plan = next;
    if (atSilence(plan) === plan.length) break;
  }
  return plan;
}
