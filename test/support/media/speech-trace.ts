/**
 * Traces the speech engine's transcriptions with the engine's process id, without touching product code (as
 * speech-call-log.ts does): a `sitecustomize.py` on the engine's PYTHONPATH wraps faster-whisper so that each call
 * appends a `start` line (pid, the file decoded for it: the worker names chunks `chunk-<index>.wav`) and, once its
 * segments are read to the end, an `end` line. A call started and not ended by a live engine is a chunk being
 * transcribed: the moment to kill that engine, or its worker, "mid-chunk".
 */
import fs from 'node:fs';
import path from 'node:path';

const SITE = `import json, os, time
_log = os.environ.get("DOCPROC_TEST_SPEECH_TRACE")
if _log:
    try:
        import faster_whisper.audio as _audio
        from faster_whisper import WhisperModel as _Model
    except Exception:
        _audio = None
    if _audio is not None:
        _last = [""]
        _decode = _audio.decode_audio

        def _decode_logged(path, *args, **kwargs):
            _last[0] = os.path.basename(str(path))
            return _decode(path, *args, **kwargs)

        def _write(phase, name):
            with open(_log, "a") as f:
                f.write(json.dumps({"pid": os.getpid(), "phase": phase, "file": name, "t": time.time()}) + "\\n")

        _transcribe = _Model.transcribe

        def _transcribe_logged(self, *args, **kwargs):
            name = _last[0]
            _write("start", name)
            segments, info = _transcribe(self, *args, **kwargs)

            def _read():
                for s in segments:
                    yield s
                _write("end", name)

            return _read(), info

        _audio.decode_audio = _decode_logged
        _Model.transcribe = _transcribe_logged
`;

export interface SpeechEvent {
  pid: number;
  phase: 'start' | 'end';
  file: string;
  /** Seconds since the epoch. */
  t: number;
}

export interface SpeechTrace {
  /** Environment for the worker (its engine processes inherit it). */
  env: Record<string, string>;
  events(): SpeechEvent[];
  /** Calls started and not ended, by engine pid (the engine may have died since: check the pid). */
  open(): SpeechEvent[];
}

/** Sets up the hook in `dir` (a sitecustomize.py and an empty trace). */
export function speechTrace(dir: string): SpeechTrace {
  const site = path.join(dir, 'speech-trace-site');
  fs.mkdirSync(site, { recursive: true });
  fs.writeFileSync(path.join(site, 'sitecustomize.py'), SITE);
  const log = path.join(dir, 'speech-trace.jsonl');
  fs.writeFileSync(log, '');
  const events = (): SpeechEvent[] =>
    fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as SpeechEvent);
  return {
    env: { PYTHONPATH: site, DOCPROC_TEST_SPEECH_TRACE: log },
    events,
    open: () => {
      // An engine runs one call at a time: a start is open until the same pid's next line.
      const last = new Map<number, SpeechEvent>();
      for (const e of events()) last.set(e.pid, e);
      return [...last.values()].filter((e) => e.phase === 'start');
    },
  };
}
