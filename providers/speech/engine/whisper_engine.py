"""The local speech engine: faster-whisper with one model loaded once, answering JSON lines over stdio.

Request (one line on stdin):  {"id": ..., "audio": "<path>", "language": "<ISO 639-1>" | null, "vad": true,
                               "prompt": "<names and terms>" | null, "op": "transcribe" | "detect_language",
                               "speakers": true | false}
                              (every key but id and audio optional: an older client's request means what it meant)
Answer (one line on stdout):  {"id", "language", "language_probability", "duration",
                               "segments": [{"start", "end", "text", "words": [{"word", "start", "end", "probability"}]}],
                               "speaker_windows": [{"start", "end", "embedding": [256 numbers]}]}  (with "speakers" only)
                           or, for "detect_language", {"id", "language", "language_probability", "duration"}
                           or {"id", "error": {"kind": "undecodable_audio" | "bad_request" | "speaker_model_missing" |
                                                         "internal", "message"}}
With "speakers", the answer carries one speaker embedding (speaker_encoder.py, GE2E) per 1.6 s window over each
segment's speech: the worker clusters them across the chunks of a recording into speaker labels (core/diarize.ts).
While it decodes it writes progress lines {"id", "progress": <seconds of audio done>}, one per segment: the worker's
engine watchdog takes them as signs of life (a long chunk is never taken for a hung engine).
Once the model is loaded it writes {"ready": true}. Logs go to stderr only. Nothing is downloaded: the model is a
local directory and the Hugging Face hub is switched off.
"""
import argparse
import json
import os
import sys
import time

os.environ["HF_HUB_OFFLINE"] = "1"
# numpy's OpenBLAS (the speaker encoder's LSTM) on one thread: with a thread per core it spun the cores it waited on
# (278 windows: 21 s of CPU with the default threads on a busy 2-core machine, 1.5 s on one thread).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import ctranslate2  # noqa: E402
from faster_whisper import WhisperModel  # noqa: E402
from faster_whisper.audio import decode_audio  # noqa: E402

SAMPLE_RATE = 16000

# Each 30 s window is decoded on its own audio, not prompted with the text before it: a prompt lets Whisper base skip
# or repeat a passage that resembles what it just wrote (a 3-minute recording of recurring sentences lost whole
# sentences in one pass: 18.8 % of its words wrong against 7.6 % unprompted), and it makes a chunk that starts without
# it differ from the same audio inside one long pass. Word timestamps move each window's end to the last whole word
# (and segment times onto the words), which wins back the accuracy the prompt gave on varied speech (a 3-minute talk:
# 6.2 % of words wrong against 6.0 % prompted, 7.2 % unprompted without them). Measured with the `base` model, int8.
DECODING = {"condition_on_previous_text": False, "word_timestamps": True}


def log(msg):
    print(f"[whisper_engine] {msg}", file=sys.stderr, flush=True)


def reply(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class Speakers:
    """The speaker encoder, loaded on the first request that asks for speakers (most never do)."""

    def __init__(self, weights):
        self.weights = weights
        self.encoder = None

    def windows(self, audio, segments):
        if self.encoder is None:
            if not self.weights or not os.path.isfile(self.weights):
                raise SpeakerModelMissing(f"no speaker model at {self.weights}")
            from speaker_encoder import SpeakerEncoder

            t0 = time.monotonic()
            self.encoder = SpeakerEncoder(self.weights)
            log(f"speaker model {self.weights} loaded in {time.monotonic() - t0:.2f} s")
        from speaker_encoder import embed_windows

        spans = [(s["start"], s["end"]) for s in segments]
        return [
            {"start": round(a, 3), "end": round(b, 3), "embedding": [round(float(x), 4) for x in v]}
            for _, a, b, v in embed_windows(self.encoder, audio, spans)
        ]


class SpeakerModelMissing(Exception):
    pass


def transcribe(model, req, progress=lambda seconds: None, speakers=None):
    audio = load(req)
    if isinstance(audio, dict):
        return audio
    vad = bool(req.get("vad", True))
    if req.get("op") == "detect_language":
        # Whisper's detector reads one 30 s window: with VAD, the first 30 s of speech (leading silence skipped).
        language, probability, _ = model.detect_language(audio, vad_filter=vad)
        return {"language": language, "language_probability": probability, "duration": audio.size / SAMPLE_RATE}
    prompt = req.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        prompt = None
    # A window Whisper is unsure of is decoded again at a higher temperature, by sampling: seeded per request, so the same
    # audio always gives the same transcript (a retried chunk, a restarted job, the cache and a direct run agree).
    ctranslate2.set_random_seed(0)
    # The prompt (names and terms the speaker uses) primes every 30 s window alike, as faster-whisper's hotwords: an
    # initial_prompt would reach only the first window of each chunk (condition_on_previous_text is off), so a word's
    # spelling would depend on where the chunking cut.
    segments, info = model.transcribe(
        audio,
        language=req.get("language") or None,
        vad_filter=vad,
        hotwords=prompt,
        **DECODING,
    )
    out = []
    for s in segments:  # a generator: each window is decoded as it is asked for
        words = [
            {"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3), "probability": round(w.probability, 4)}
            for w in (s.words or [])
        ]
        out.append({"start": round(s.start, 3), "end": round(s.end, 3), "text": s.text, "words": words})
        progress(round(s.end, 3))
    answer = {
        "language": info.language,
        "language_probability": info.language_probability,
        "duration": audio.size / SAMPLE_RATE,
        "segments": out,
    }
    if req.get("speakers") and speakers is not None:
        try:
            answer["speaker_windows"] = speakers.windows(audio, out)
        except SpeakerModelMissing as e:
            return {"error": {"kind": "speaker_model_missing", "message": str(e)}}
    return answer


def load(req):
    """The request's audio as 16 kHz samples, or an error answer."""
    audio_path = req.get("audio")
    if not isinstance(audio_path, str) or not audio_path:
        return {"error": {"kind": "bad_request", "message": "audio: a file path is required"}}
    try:
        audio = decode_audio(audio_path, sampling_rate=SAMPLE_RATE)
    except FileNotFoundError:
        return {"error": {"kind": "bad_request", "message": f"no such file: {audio_path}"}}
    except Exception as e:  # PyAV/FFmpeg refused the input
        return {"error": {"kind": "undecodable_audio", "message": f"{type(e).__name__}: {e}"}}
    if audio.size == 0:
        return {"error": {"kind": "undecodable_audio", "message": "the file holds no audio samples"}}
    return audio


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--speaker-model", default=None, help="Resemblyzer's pretrained.pt (for speaker windows)")
    args = parser.parse_args()
    t0 = time.monotonic()
    model = WhisperModel(args.model_dir, device="cpu", compute_type="int8", cpu_threads=args.threads, local_files_only=True)
    log(f"model {args.model_dir} loaded in {time.monotonic() - t0:.2f} s, {args.threads or 'default'} threads")
    speakers = Speakers(args.speaker_model)
    reply({"ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        req_id = None
        try:
            req = json.loads(line)
            req_id = req.get("id")
            result = transcribe(model, req, lambda seconds, i=req_id: reply({"id": i, "progress": seconds}), speakers)
        except Exception as e:
            log(f"request {req_id} failed: {type(e).__name__}: {e}")
            result = {"error": {"kind": "internal", "message": f"{type(e).__name__}: {e}"}}
        reply({"id": req_id, **result})


if __name__ == "__main__":
    main()
