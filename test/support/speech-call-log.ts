/**
 * Counts the speech engine's transcriptions without touching product code: a `sitecustomize.py` on the engine's
 * PYTHONPATH wraps faster-whisper's `WhisperModel.transcribe` so each call appends one line, the name of the file the
 * engine decoded for it (the worker names chunk files `chunk-<index>.wav`), to a log file. Python imports
 * sitecustomize at start (also in a venv), before whisper_engine.py imports faster-whisper; the engine itself runs
 * unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';

const SITE = `import os
_log = os.environ.get("DOCPROC_TEST_SPEECH_CALLS")
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

        _transcribe = _Model.transcribe

        def _transcribe_logged(self, *args, **kwargs):
            with open(_log, "a") as f:
                f.write(_last[0] + "\\n")
            return _transcribe(self, *args, **kwargs)

        _audio.decode_audio = _decode_logged
        _Model.transcribe = _transcribe_logged
`;

interface SpeechCallLog {
  /** Environment for the worker (its engine processes inherit it). */
  env: Record<string, string>;
  /** The file names transcribed so far, one entry per engine call. */
  calls(): string[];
}

/** Sets up the hook in `dir` (a sitecustomize.py and an empty log). */
export function speechCallLog(dir: string): SpeechCallLog {
  const site = path.join(dir, 'site');
  fs.mkdirSync(site, { recursive: true });
  fs.writeFileSync(path.join(site, 'sitecustomize.py'), SITE);
  const log = path.join(dir, 'speech-calls.log');
  fs.writeFileSync(log, '');
  return {
    env: { PYTHONPATH: site, DOCPROC_TEST_SPEECH_CALLS: log },
    calls: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}
