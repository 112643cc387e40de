/**
 * Media for the media provider's tests, made by the real engines: ffmpeg (lavfi `sine`, `anullsrc`, `testsrc`) and
 * espeak-ng for speech. Nothing here mocks a tool.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../../providers/process/run-tool';
import { wavInfo } from '../../../providers/media/audio';

export const RATE = 16_000;

/** Runs ffmpeg quietly (overwriting outputs) and returns its stdout. */
export async function ffmpeg(...args: string[]): Promise<Buffer> {
  const { stdout } = await runTool('ffmpeg', ['-nostdin', '-hide_banner', '-v', 'error', '-y', ...args], {
    timeoutMs: 120_000,
  });
  return stdout;
}

/** Writes 16-bit mono PCM samples as a WAV file (ffmpeg writes the header). */
export async function writeWav(file: string, samples: Int16Array, rate = RATE): Promise<void> {
  const raw = `${file}.pcm`;
  await writeFile(raw, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  await ffmpeg(
    '-f',
    's16le',
    '-ar',
    String(rate),
    '-ac',
    '1',
    '-i',
    raw,
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    file,
  );
  await rm(raw);
}

/** The PCM bytes of a WAV file (after its header). */
export async function pcmBytes(file: string): Promise<Buffer> {
  const info = await wavInfo(file);
  return (await readFile(file)).subarray(info.dataOffset, info.dataOffset + info.samples * 2);
}

/** A sentence spoken by espeak-ng, as 16 kHz mono samples. */
export async function spoken(text: string, dir: string): Promise<Int16Array> {
  const raw = path.join(dir, 'espeak.wav');
  await runTool('espeak-ng', ['-w', raw, text], { timeoutMs: 60_000 });
  const pcm = await ffmpeg('-i', raw, '-ac', '1', '-ar', String(RATE), '-f', 's16le', '-');
  return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
}

/** Joins sample runs with stretches of digital silence between them; returns the samples and where each run lies. */
export function joinWithPauses(
  runs: Int16Array[],
  pauseSeconds: (i: number) => number,
): { samples: Int16Array; spans: [number, number][] } {
  const pauses = runs.map((_, i) => (i + 1 < runs.length ? Math.round(pauseSeconds(i) * RATE) : 0));
  const samples = new Int16Array(runs.reduce((n, r, i) => n + r.length + pauses[i], 0));
  const spans: [number, number][] = [];
  let at = 0;
  runs.forEach((r, i) => {
    samples.set(r, at);
    spans.push([at / RATE, (at + r.length) / RATE]);
    at += r.length + pauses[i];
  });
  return { samples, spans };
}

/** Root-mean-square level in dBFS of the samples within `±halfSeconds` of a time. */
export function levelDbAround(samples: Int16Array, seconds: number, halfSeconds = 0.01): number {
  const from = Math.max(0, Math.round((seconds - halfSeconds) * RATE));
  const to = Math.min(samples.length, Math.round((seconds + halfSeconds) * RATE));
  let sum = 0;
  for (let i = from; i < to; i++) sum += (samples[i] / 32768) ** 2;
  return 10 * Math.log10(sum / Math.max(1, to - from) || 1e-12);
}

/** A picture's pixels as 8-bit grey, decoded by ffmpeg. */
export const greyPixels = (image: string): Promise<Buffer> =>
  ffmpeg('-i', image, '-f', 'rawvideo', '-pix_fmt', 'gray', '-');

/** Mean absolute difference of two equally sized pixel buffers (0 = identical, 255 = inverted). */
export function meanAbsDiff(a: Buffer, b: Buffer): number {
  if (a.length !== b.length) throw new Error(`pictures differ in size: ${a.length} and ${b.length} bytes`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}
