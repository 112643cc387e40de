/**
 * faster-whisper called directly, as the benchmarks set the service beside it (bench/audio.bench.ts,
 * bench/cold-start.bench.ts): the engine script's model, compute type and decoding options, in a Python process of its
 * own, with its load and transcription times.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTimed } from './service';

export const ENGINE_SCRIPT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../providers/speech/engine/whisper_engine.py',
);
/** The engine's compute type, read from its script so the raw side cannot drift from it. */
export const COMPUTE_TYPE = /compute_type="(\w+)"/.exec(fs.readFileSync(ENGINE_SCRIPT, 'utf8'))?.[1] ?? 'int8';

/**
 * faster-whisper alone: load the model, decode the file, transcribe it whole (VAD on and the decoding options of the
 * engine script, imported from it).
 */
const RAW_PY = `
import json, os, resource, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
from faster_whisper import WhisperModel
from faster_whisper.audio import decode_audio
model_dir, compute, threads, audio_path, engine_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
vad = sys.argv[6] != "0" if len(sys.argv) > 6 else True
sys.path.insert(0, engine_dir)
from whisper_engine import DECODING
t0 = time.monotonic()
model = WhisperModel(model_dir, device="cpu", compute_type=compute, cpu_threads=threads, local_files_only=True)
t1 = time.monotonic()
audio = decode_audio(audio_path, sampling_rate=16000)
segments, info = model.transcribe(audio, language="en", vad_filter=vad, **DECODING)
segments = list(segments)
text = "".join(s.text for s in segments)
words = sum(len(s.words or []) for s in segments)
t2 = time.monotonic()
print(json.dumps({"load_s": t1 - t0, "transcribe_s": t2 - t1, "words": len(text.split()), "text": text, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
`;

export interface RawRun {
  wallMs: number;
  transcribeMs: number;
  loadMs: number;
  words: number;
  peakMb: number;
  text?: string;
}

export async function rawEngine(
  python: string,
  modelDir: string,
  threads: number,
  file: string,
  vad = true,
  keepText = false,
): Promise<RawRun> {
  const r = await runTimed(python, [
    '-c',
    RAW_PY,
    modelDir,
    COMPUTE_TYPE,
    String(threads),
    file,
    path.dirname(ENGINE_SCRIPT),
    vad ? '1' : '0',
  ]);
  const j = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    load_s: number;
    transcribe_s: number;
    words: number;
    maxrss_kb: number;
    text: string;
  };
  return {
    wallMs: r.ms,
    transcribeMs: j.transcribe_s * 1000,
    loadMs: j.load_s * 1000,
    words: j.words,
    peakMb: j.maxrss_kb / 1024,
    ...(keepText ? { text: j.text } : {}),
  };
}
