/**
 * Long speech recordings for the slow tests and the audio benchmark: English sentences spoken by espeak-ng (each on
 * its own, joined with pauses), looped by ffmpeg to the length asked for; 16 kHz mono 16-bit WAV.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ffmpeg, joinWithPauses, RATE, spoken, writeWav } from './media-factory';

/** Ordinary prose; English because Whisper base hears espeak-ng's English voice reliably. */
export const RECORDING_SENTENCES = [
  'The train to Berlin leaves one hour later than planned today.',
  'Please do not forget your ticket and your passport.',
  'In the dining car there is hot soup and fresh coffee.',
  'We wish you a pleasant journey and a very nice day.',
  'The next stop is the central station of the old town.',
  'The weather was warm and sunny, so we walked to the park after lunch.',
  'The children played near the old bridge until the evening.',
  'On Monday the library opens at nine and closes at six.',
  'My neighbour repairs bicycles in the small shop around the corner.',
  'After dinner we read a book and listened to the radio.',
];

/**
 * `<dir>/speech-<seconds>s.wav`: the sentences with pauses of 0.6–1.4 s, looped to exactly `seconds` (the last
 * sentence may be cut). An existing file of that name is reused (the benchmark keeps its inputs in a cache dir).
 */
export async function speechRecording(dir: string, seconds: number): Promise<string> {
  const file = path.join(dir, `speech-${seconds}s.wav`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dir, { recursive: true });
  const base = path.join(dir, 'speech-base.wav');
  if (!fs.existsSync(base)) {
    const runs: Int16Array[] = [];
    for (const s of RECORDING_SENTENCES) runs.push(await spoken(s, dir));
    const { samples } = joinWithPauses([...runs, new Int16Array(RATE)], (i) => 0.6 + (i % 5) * 0.2);
    await writeWav(`${base}.tmp.wav`, samples);
    fs.renameSync(`${base}.tmp.wav`, base);
  }
  await ffmpeg(
    '-stream_loop',
    '-1',
    '-i',
    base,
    '-t',
    String(seconds),
    '-ac',
    '1',
    '-ar',
    String(RATE),
    '-c:a',
    'pcm_s16le',
    '-map_metadata',
    '-1',
    `${file}.tmp.wav`,
  );
  fs.renameSync(`${file}.tmp.wav`, file);
  return file;
}

/** Deterministic low brown noise: a room between talks (no speech). */
export function roomNoise(seconds: number, seed = 12345): Int16Array {
  const out = new Int16Array(Math.round(seconds * RATE));
  let s = seed;
  let level = 0;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    level = Math.max(-3000, Math.min(3000, level + ((s / 0x7fffffff) * 2 - 1) * 200));
    out[i] = Math.round(level);
  }
  return out;
}

/**
 * `<dir>/paused-<seconds>s.wav`: `speechSeconds` of the looped sentences, then `pauseSeconds` of room noise, repeated
 * to `seconds` in all (a session with long breaks); with the seconds of speech it holds. Reused when present.
 */
export async function pausedRecording(
  dir: string,
  seconds: number,
  speechSeconds = 60,
  pauseSeconds = 120,
): Promise<{ file: string; speechSeconds: number }> {
  const file = path.join(dir, `paused-${seconds}s-${speechSeconds}-${pauseSeconds}.wav`);
  const block = speechSeconds + pauseSeconds;
  const spoken = Math.floor(seconds / block) * speechSeconds + Math.min(seconds % block, speechSeconds);
  if (fs.existsSync(file)) return { file, speechSeconds: spoken };
  const speech = await speechRecording(dir, speechSeconds);
  const { wavInfo } = await import('../../../providers/media/audio');
  const info = await wavInfo(speech);
  const bytes = fs.readFileSync(speech).subarray(info.dataOffset, info.dataOffset + info.samples * 2);
  const talk = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const all = new Int16Array(Math.round(seconds * RATE));
  let at = 0;
  for (let i = 0; at < all.length; i++) {
    all.set(talk.subarray(0, Math.min(talk.length, all.length - at)), at);
    at += talk.length;
    if (at >= all.length) break;
    const noise = roomNoise(pauseSeconds, 777 + i);
    all.set(noise.subarray(0, Math.min(noise.length, all.length - at)), at);
    at += noise.length;
  }
  await writeWav(`${file}.tmp.wav`, all);
  fs.renameSync(`${file}.tmp.wav`, file);
  return { file, speechSeconds: spoken };
}
