import { speechTrace } from './speech-trace';

/**
 * Counts the speech engine's transcriptions without touching product code: the started calls of a speech trace
 * (speech-trace.ts wraps faster-whisper through a `sitecustomize.py` on the engine's PYTHONPATH), by the name of the
 * file the engine decoded for each (the worker names chunk files `chunk-<index>.wav`).
 */
interface SpeechCallLog {
  /** Environment for the worker (its engine processes inherit it). */
  env: Record<string, string>;
  /** The file names transcribed so far, one entry per engine call. */
  calls(): string[];
}

/** Sets up the hook in `dir` (a sitecustomize.py and an empty log). */
export function speechCallLog(dir: string): SpeechCallLog {
  const trace = speechTrace(dir);
  return {
    env: trace.env,
    calls: () =>
      trace
        .events()
        .filter((e) => e.phase === 'start')
        .map((e) => e.file),
  };
}
