/** Speech for the speech tests, synthesised by espeak-ng and resampled by sox to 16 kHz mono 16-bit WAV. */
import path from 'node:path';
import { runTool } from '../../../providers/process/run-tool';
import { joinWithPauses, pcmBytes, RATE, writeWav } from './media-factory';

/** Ordinary prose in two languages, espeak-ng's default voice and speed for each (nothing tuned to the engine). */
export const SENTENCES = {
  de: 'Am Sonntag gehen wir mit den Kindern in den Park. Das Wetter ist schön und die Sonne scheint den ganzen Tag.',
  en: 'The weather was warm and sunny, so we walked to the park after lunch. The children played near the old bridge until the evening.',
} as const;

/** Speaks `text` with the espeak-ng voice `voice` into `<dir>/<name>.wav` (16 kHz mono); returns the file. */
export async function speak(text: string, voice: string, dir: string, name: string): Promise<string> {
  const raw = path.join(dir, `${name}.espeak.wav`);
  const out = path.join(dir, `${name}.wav`);
  await runTool('espeak-ng', ['-v', voice, '-w', raw, text], { timeoutMs: 60_000 });
  // -D: no dither. sox dithers by default when it resamples to 16 bits, with random noise, so the same sentence gave
  // different samples on every run (and transcripts that differed from run to run).
  await runTool('sox', ['-D', raw, '-r', '16000', '-c', '1', '-b', '16', out], { timeoutMs: 60_000 });
  return out;
}

/**
 * Sentences for the multi-chunk recordings, each spoken on its own and joined with pauses. English: Whisper base
 * hears espeak-ng's English voice reliably, so a difference between a chunked and a whole transcript measures the
 * chunking, not the model guessing at a robotic German voice.
 */
export const CHUNKED_SENTENCES = [
  'The train to Berlin leaves one hour later than planned today.',
  'Please do not forget your ticket and your passport.',
  'In the dining car there is hot soup and fresh coffee.',
  'We wish you a pleasant journey and a very nice day.',
  'The next stop is the central station of the old town.',
];

/**
 * `<dir>/long.wav`: the chunked sentences, each spoken by `speak`, joined with 1.2 s pauses; with its length in
 * seconds.
 */
export async function chunkedRecording(dir: string): Promise<{ file: string; seconds: number }> {
  const runs: Int16Array[] = [];
  for (const [i, sentence] of CHUNKED_SENTENCES.entries()) {
    const pcm = await pcmBytes(await speak(sentence, 'en', dir, `long-${i}`));
    runs.push(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
  }
  const joined = joinWithPauses(runs, () => 1.2);
  const file = path.join(dir, 'long.wav');
  await writeWav(file, joined.samples);
  return { file, seconds: joined.samples.length / RATE };
}
