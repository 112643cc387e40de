import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../core/errors';
import { cutChunk, decodeToWav, wavInfo } from '../../providers/media/audio';
import { frameTimes, parseFrameRequest } from '../../core/jobs/frame-request';
import { SUPPORTED_FORMATS, audioFormatOf, videoMetadata } from '../../core/jobs/media-formats';
import { extractFrames } from '../../providers/media/frames';
import { probeMedia } from '../../providers/media/probe';
import { findSilences, planChunks, planChunksAtSilence } from '../../providers/media/silence';
import {
  RATE,
  ffmpeg,
  greyPixels,
  joinWithPauses,
  levelDbAround,
  meanAbsDiff,
  pcmBytes,
  spoken,
  writeWav,
} from '../support/media/media-factory';

const TONE = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=1.5', '-ac', '2'];
const PICTURE = ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25:duration=1.5', '-pix_fmt', 'yuv420p'];

/** One file per spec format, named without an extension: the format must come from the content. */
const SAMPLES: Record<(typeof SUPPORTED_FORMATS)[number], string[]> = {
  wav: [...TONE, '-f', 'wav'],
  flac: [...TONE, '-f', 'flac'],
  mp3: [...TONE, '-c:a', 'libmp3lame', '-f', 'mp3'],
  mpga: [...TONE, '-c:a', 'mp2', '-f', 'mp2'],
  m4a: [...TONE, '-c:a', 'aac', '-f', 'ipod'],
  mp4: [...TONE, ...PICTURE, '-c:v', 'libx264', '-c:a', 'aac', '-f', 'mp4'],
  mpeg: [...TONE, ...PICTURE, '-c:v', 'mpeg1video', '-c:a', 'mp2', '-f', 'mpeg'],
  ogg: [...TONE, '-c:a', 'libvorbis', '-f', 'ogg'],
  oga: [...TONE, '-c:a', 'flac', '-f', 'ogg'],
  webm: [...TONE, '-c:a', 'libopus', '-f', 'webm'],
};

async function rejection(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => expect.fail('expected a rejection'),
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw err;
  return err;
}

describe('media provider with ffmpeg', function () {
  this.timeout(120_000);
  let dir: string;
  const at = (name: string) => path.join(dir, name);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'media-test-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('formats by content', () => {
    it('recognises every format of the spec list and decodes it to 16 kHz mono WAV', async () => {
      for (const [format, args] of Object.entries(SAMPLES)) {
        await ffmpeg(...args, at(`sample-${format}`));
        const probe = await probeMedia(at(`sample-${format}`));
        expect(audioFormatOf(probe), format).to.equal(format);
        expect(probe.audio!.sampleRate, format).to.be.above(0);
        expect(probe.duration, format).to.be.closeTo(1.5, 0.1);
        const wav = await decodeToWav(at(`sample-${format}`), at(`decoded-${format}.wav`));
        expect({ rate: wav.sampleRate, channels: wav.channels, bits: wav.bitsPerSample }, format).to.deep.equal({
          rate: RATE,
          channels: 1,
          bits: 16,
        });
        // Codec padding may add or trim a frame at either end; nothing more.
        expect(wav.duration, format).to.be.closeTo(1.5, 0.1);
      }
    });

    it('refuses a text file, an image and other containers as unsupported_format', async () => {
      await writeFile(at('notes.mp3'), 'These are meeting notes, not audio.\n'.repeat(50));
      await ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', '-f', 'image2', at('picture.wav'));
      await ffmpeg(...TONE, '-c:a', 'aac', '-f', 'matroska', at('aac.webm'));
      await ffmpeg(...TONE, '-c:a', 'aac', '-f', 'adts', at('raw.m4a'));
      for (const name of ['notes.mp3', 'picture.wav', 'aac.webm', 'raw.m4a']) {
        const err = await rejection(probeMedia(at(name)).then(audioFormatOf));
        expect(err.code, name).to.equal('INVALID_FORMAT');
        expect(err.details, name).to.deep.include({
          error_type: 'unsupported_format',
          supported_formats: [...SUPPORTED_FORMATS],
        });
      }
    });

    it('refuses a video without sound as no_audio_stream and reads its metadata', async () => {
      await ffmpeg(
        '-f',
        'lavfi',
        '-i',
        'testsrc=size=320x240:rate=30000/1001:duration=2',
        '-c:v',
        'libx264',
        '-pix_fmt',
        'yuv420p',
        '-f',
        'mp4',
        at('silent'),
      );
      const probe = await probeMedia(at('silent'));
      const err = await rejection(Promise.resolve(probe).then(audioFormatOf));
      expect(err.details).to.deep.include({ error_type: 'no_audio_stream', supported_formats: [...SUPPORTED_FORMATS] });
      const meta = videoMetadata(probe)!;
      expect(meta).to.include({ resolution: '320x240', codec: 'h264', fps: 29.97 });
      expect(meta.duration).to.be.closeTo(2, 0.05);
    });

    it('reports a damaged file of a supported format as UNPROCESSABLE_INPUT', async () => {
      await ffmpeg(...SAMPLES.mp4, at('whole-mp4'));
      const whole = await readFile(at('whole-mp4'));
      await writeFile(at('truncated'), whole.subarray(0, Math.floor(whole.length / 3)));
      const err = await rejection(probeMedia(at('truncated')));
      expect([err.code, err.details.error_type]).to.deep.equal(['UNPROCESSABLE_INPUT', 'corrupt']);
      await writeFile(at('text.ogg'), 'Not a recording.\n'.repeat(50));
      const undecodable = await rejection(decodeToWav(at('text.ogg'), at('text.wav')));
      expect([undecodable.code, undecodable.details.error_type]).to.deep.equal(['UNPROCESSABLE_INPUT', 'undecodable']);
    });

    it('stops at once when aborted', async () => {
      await ffmpeg(...SAMPLES.wav, at('tone.wav'));
      const ctl = new AbortController();
      ctl.abort(new Error('job cancelled'));
      const { signal } = ctl;
      for (const run of [
        () => probeMedia(at('tone.wav'), { signal }),
        () => decodeToWav(at('tone.wav'), at('x.wav'), { signal }),
      ]) {
        await run().then(
          () => expect.fail('expected a rejection'),
          (e: Error) => expect(e.message).to.equal('job cancelled'),
        );
      }
    });
  });

  describe('chunks at silence', () => {
    /** Cuts every chunk of a plan and checks they hold each sample of the WAV exactly once. */
    async function expectSampleExact(wav: string, plan: { start: number; end: number }[]) {
      const parts: Buffer[] = [];
      for (const [i, c] of plan.entries()) {
        const info = await cutChunk(wav, c.start, c.end, at(`chunk-${i}.wav`));
        expect(info.sampleRate).to.equal(RATE);
        parts.push(await pcmBytes(at(`chunk-${i}.wav`)));
      }
      expect(Buffer.compare(Buffer.concat(parts), await pcmBytes(wav))).to.equal(0);
    }

    it('cuts speech only in pauses between sentences, and the chunks add up to every sample', async () => {
      const phrases = ['Seven ships sailed north.', 'Please pass the salt.', 'Rain fell all night long.'];
      const runs: Int16Array[] = [];
      for (let i = 0; i < 15; i++) runs.push(await spoken(phrases[i % phrases.length], dir));
      const { samples, spans } = joinWithPauses(runs, (i) => 0.5 + (i % 4) * 0.1);
      await writeWav(at('speech-source.wav'), samples);
      const wav = await decodeToWav(at('speech-source.wav'), at('speech.wav'));
      expect(wav.samples).to.equal(samples.length);

      const plan = await planChunksAtSilence(at('speech.wav'), wav.duration, 10);
      expect(plan).to.have.length(Math.ceil(wav.duration / 10));
      for (const c of plan.slice(0, -1)) {
        expect(c.atSilence).to.equal(true);
        expect(levelDbAround(samples, c.end), `cut at ${c.end}`).to.be.below(-50);
        expect(
          spans.some(([s, e]) => c.end > s && c.end < e),
          `cut at ${c.end} inside a sentence`,
        ).to.equal(false);
      }
      await expectSampleExact(at('speech.wav'), plan);
    });

    it('looks again at a louder level when the pauses of a noisy room never fall to -30 dB', async () => {
      let seed = 12345;
      const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 2 * 0.045 * 32767;
      const burst = (i: number) =>
        Int16Array.from(
          { length: RATE },
          (_, n) => 0.5 * 32767 * Math.sin((2 * Math.PI * (300 + 50 * (i % 5)) * n) / RATE),
        );
      const gap = Math.round(0.6 * RATE);
      const runs = Array.from({ length: 12 }, (_, i) =>
        Int16Array.from([...Array.from({ length: gap }, noise), ...burst(i)]),
      );
      const { samples, spans } = joinWithPauses(runs, () => 0);
      await writeWav(at('noisy.wav'), samples);
      const { duration } = await wavInfo(at('noisy.wav'));

      expect(
        planChunks(duration, await findSilences(at('noisy.wav'), duration), 5)
          .slice(0, -1)
          .some((c) => c.atSilence),
      ).to.equal(false);
      const plan = await planChunksAtSilence(at('noisy.wav'), duration, 5);
      expect(plan.length).to.be.above(2);
      for (const c of plan.slice(0, -1)) {
        expect(c.atSilence).to.equal(true);
        // Each run is noise then a tone: a cut must fall in the noise part.
        expect(
          spans.some(([s]) => c.end > s + 1e-9 && c.end < s + gap / RATE),
          `cut at ${c.end}`,
        ).to.equal(true);
      }
      await expectSampleExact(at('noisy.wav'), plan);
    });
  });

  describe('frames', () => {
    const FPS = 25;
    const FRAMES = 100;
    before(async () => {
      // Key frames once a second and B-frames, so a seek must decode from a key frame and drop what comes before.
      await ffmpeg(
        '-f',
        'lavfi',
        '-i',
        `testsrc=size=320x240:rate=${FPS}:duration=${FRAMES / FPS}`,
        '-c:v',
        'libx264',
        '-pix_fmt',
        'yuv420p',
        '-g',
        '25',
        '-bf',
        '2',
        at('clip.mp4'),
      );
    });

    /** Frame `n` decoded from the start without any seeking, as JPEG like ours. */
    async function frameNumber(n: number): Promise<Buffer> {
      const out = at(`ref-${n}.jpg`);
      await ffmpeg('-i', at('clip.mp4'), '-vf', `select=eq(n\\,${n})`, '-frames:v', '1', '-q:v', '2', out);
      return greyPixels(out);
    }

    it("gives ffmpeg's own frame at each time of the union of timestamps and the interval grid, none past the end", async () => {
      const probe = await probeMedia(at('clip.mp4'));
      const meta = videoMetadata(probe)!;
      expect(meta).to.deep.equal({ resolution: '320x240', codec: 'h264', fps: FPS, duration: FRAMES / FPS });
      const times = frameTimes(parseFrameRequest([1.52, 0.5, 3.99, 7, 4], 1, 1000), meta.duration, 1000);
      expect(times).to.deep.equal([0, 0.5, 1, 1.52, 2, 3, 3.99]);
      await mkdir(at('frames'));
      const frames = await extractFrames(at('clip.mp4'), times, at('frames'));
      expect(frames.map((f) => f.time)).to.deep.equal(times);

      for (const { time, path: jpeg } of frames) {
        // ffmpeg's own frame at that time…
        await ffmpeg('-ss', String(time), '-i', at('clip.mp4'), '-frames:v', '1', '-q:v', '2', at('own.jpg'));
        const own = await readFile(at('own.jpg')).catch(() => null);
        // …which is the first frame at or after it; after the last frame's start, the last frame.
        const n = Math.min(Math.ceil(time * FPS - 1e-6), FRAMES - 1);
        if (own) expect(Buffer.compare(await readFile(jpeg), own), `${time} s`).to.equal(0);
        else expect(n, `${time} s`).to.equal(FRAMES - 1);
        await rm(at('own.jpg'), { force: true });
        const ours = await greyPixels(jpeg);
        // testsrc changes a small part of the picture from frame to frame (its counter and a moving bar).
        const same = meanAbsDiff(ours, await frameNumber(n));
        const neighbour = meanAbsDiff(ours, await frameNumber(n === 0 ? 1 : n - 1));
        expect(same, `${time} s against frame ${n}`).to.be.below(0.05);
        expect(neighbour, `${time} s against a neighbour of frame ${n}`).to.be.above(0.2);
      }
    });
  });
});
