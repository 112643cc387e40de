/**
 * The recordings' part of bench/chunks.bench.ts: transcripts from the local speech engine (faster-whisper, as one
 * media slot of the service runs it) cut by the transcript chunker (domain/chunks/media-chunks.ts), on the recordings
 * of the other benches: samples/audio.mp3 (a human speaker, the README's sample) and the diarize bench's espeak-ng
 * dialogue of two voices (generated here from the Debian package), with speaker labels as `diarize=true` gives them.
 * Scores: chunks over the budget (recounted with js-tiktoken's `encode`), boundaries inside a sentence (the chunk
 * before does not end a sentence, and neither a pause of 1 s nor a change of speaker is there), the dialogue's
 * turns that start a chunk (within 0.6 s), chunks of one speaker, and the chunker's time beside the engine's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { loadConfig } from '../core/config/config';
import { diarize } from '../core/results/diarize';
import type { AudioSegment } from '../core/results/result-shapes';
import { chunkTranscript } from '../domain/chunks/media-chunks';
import { LocalSpeechProvider, localSpeechOptions } from '../providers/speech/local';
import { DIALOGUE, dialogueRecording } from '../test/support/media/speech-speakers';
import { ROOT } from '../test/support/servers/processes';
import { out } from './support';

const MAX_TOKENS = 48;
const exact = new Tiktoken(cl100k);
const SENTENCE_END = /[.!?…]["'”’)\]]*$/u;
const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)} %`);

interface Recording {
  name: string;
  file: string;
  speakers: boolean;
  /** Seconds at which the reference speaker changes (the dialogue's turns). */
  turns: number[];
}

export async function mediaChunks(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-chunks-media-'));
  const engine = new LocalSpeechProvider({
    ...localSpeechOptions(loadConfig({ ...process.env, MEDIA_CONCURRENCY: '', SPEECH_THREADS: '' })),
    processes: 1,
  });
  try {
    const dialogue = await dialogueRecording(
      dir,
      'dialogue',
      ['en+m3', 'en+f3'],
      Array.from({ length: 24 }, (_, i) => DIALOGUE[i % DIALOGUE.length]!),
    );
    const recordings: Recording[] = [
      { name: 'samples/audio.mp3', file: path.join(ROOT, 'samples', 'audio.mp3'), speakers: false, turns: [] },
      {
        name: `espeak-ng dialogue, 2 voices, ${dialogue.seconds.toFixed(0)} s`,
        file: dialogue.file,
        speakers: true,
        turns: dialogue.turns.slice(1).map((t) => t.start),
      },
    ];
    // Loads the model once, outside the figures.
    await engine.transcribe(recordings[0]!.file, { language: 'en' });
    out('');
    out(`## Chunks of transcripts at ${MAX_TOKENS} tokens (local speech engine, words' times)`);
    out('');
    out(
      '| recording | chunks | over budget | cut in a sentence | turns that start a chunk | one speaker | engine ms | chunks ms |',
    );
    out('| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of recordings) {
      const t0 = performance.now();
      const t = await engine.transcribe(r.file, { language: 'en', speakers: r.speakers });
      const engineMs = performance.now() - t0;
      let segments: AudioSegment[] = t.segments.map((s, id) => ({ id, ...s, text: ` ${s.text}` }));
      if (r.speakers) segments = diarize(segments, t.speakerWindows ?? [], {});
      const t1 = performance.now();
      const chunks = chunkTranscript(segments, {
        maxTokens: MAX_TOKENS,
        overlapTokens: 0,
        tokenizer: 'cl100k_base',
        speakers: r.speakers,
      });
      const chunkMs = performance.now() - t1;
      const over = chunks.filter((c) => exact.encode(c.text, [], []).length > MAX_TOKENS).length;
      let cuts = 0;
      for (let i = 1; i < chunks.length; i++) {
        const [a, b] = [chunks[i - 1]!, chunks[i]!];
        const turn = a.speakers.at(-1) !== b.speakers[0];
        if (!SENTENCE_END.test(a.text.trim()) && b.start - a.end < 1 && !turn) cuts++;
      }
      const starts = chunks.map((c) => c.start);
      const turnsHit = r.turns.filter((at) => starts.some((s) => Math.abs(s - at) <= 0.6)).length;
      const oneSpeaker = chunks.filter((c) => c.speakers.length <= 1).length;
      out(
        `| ${r.name} | ${chunks.length} | ${over} | ${pct(cuts, Math.max(0, chunks.length - 1))} | ` +
          `${r.turns.length ? pct(turnsHit, r.turns.length) : 'n/a'} | ${pct(oneSpeaker, chunks.length)} | ` +
          `${engineMs.toFixed(0)} | ${chunkMs.toFixed(1)} |`,
      );
    }
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
