/** Speech for the speech tests, synthesised by espeak-ng and resampled by sox to 16 kHz mono 16-bit WAV. */
import path from 'node:path';
import { runTool } from '../../providers/process/run-tool';

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
  await runTool('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', out], { timeoutMs: 60_000 });
  return out;
}
