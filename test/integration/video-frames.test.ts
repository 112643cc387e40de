import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { ffmpeg } from '../support/media/media-factory';
import { postMultipart, type FormFile } from '../support/clients/pdf-http';

// POST /api/video/frames (spec §4.7, contract §7) on the real API and worker over loopback HTTP, on a Temporal dev
// server, with real ffmpeg: the frames of a generated h264 clip come back as paths that download through the files
// route, each the very JPEG ffmpeg writes for that time. The provider's own tests check the frame choice in detail.

const FPS = 25;
const SECONDS = 2.6;

/** Posts to /api/video/frames (the PDF tests' multipart helper). */
const postFrames = (base: string, fields: Record<string, string>, file: FormFile) =>
  postMultipart(`${base}/api/video/frames`, fields, file);

describe('POST /api/video/frames', function () {
  this.timeout(90_000);
  let s: Stack;
  let dir: string;
  let clip: Buffer;
  const video = () => ({ bytes: clip, name: 'clip.mp4', type: 'video/mp4' });
  /** Jobs and uploads in the store: a refused request adds neither. */
  const stored = async () => ({
    jobs: (await s.worker.store.list('records/jobs/')).length,
    uploads: (await s.worker.store.list('uploads/')).length,
  });

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'video-frames-test-'));
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=320x240:rate=${FPS}:duration=${SECONDS}`,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-g',
      '25',
      path.join(dir, 'clip.mp4'),
    );
    clip = readFileSync(path.join(dir, 'clip.mp4'));
    s = await startStack();
  });
  after(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers the sorted union of timestamps and the interval grid, past the end dropped; each path downloads ffmpeg’s own frame', async () => {
    const before = await stored();
    const r = await postFrames(s.url, { timestamps: '2,0.5,9', interval: '1' }, video());
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(200);
    // One job ran (the count the refusals below compare); its upload stays its input (until retention).
    expect(await stored()).to.deep.equal({ jobs: before.jobs + 1, uploads: before.uploads + 1 });
    const frames: { timestamp: number; path: string }[] = r.body.data.frames;
    // The grid 0, 1, 2 (3 is past the 2.6 s end) with 0.5 and 2; 9 is past the end.
    expect(frames.map((f) => f.timestamp)).to.deep.equal([0, 0.5, 1, 2]);
    expect(new Set(frames.map((f) => f.path)).size).to.equal(frames.length);
    for (const { timestamp, path: p } of frames) {
      expect(p).to.match(/^jobs\/[^/]+\/out\/frames\/[A-Za-z0-9._-]+\.jpg$/);
      const res = await fetch(`${s.url}/api/event-job/files/${p}`);
      expect(res.status, p).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^image\/jpeg/);
      const body = Buffer.from(await res.arrayBuffer());
      const own = path.join(dir, 'own.jpg');
      await ffmpeg('-ss', timestamp.toFixed(6), '-i', path.join(dir, 'clip.mp4'), '-frames:v', '1', '-q:v', '2', own);
      expect(body.equals(readFileSync(own)), `${timestamp} s`).to.equal(true);
      await rm(own, { force: true });
    }
    // Frames at different times differ (testsrc's counter moves).
    const first = Buffer.from(await (await fetch(`${s.url}/api/event-job/files/${frames[0].path}`)).arrayBuffer());
    const last = Buffer.from(await (await fetch(`${s.url}/api/event-job/files/${frames[3].path}`)).arrayBuffer());
    expect(first.equals(last)).to.equal(false);
  });

  it('without timestamps and interval: 400 before any job', async () => {
    const before = await stored();
    const r = await postFrames(s.url, {}, video());
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    expect(await stored()).to.deep.equal(before);
  });

  for (const [fields, field] of [
    [{ timestamps: '1,abc' }, 'timestamps'],
    [{ timestamps: '-1' }, 'timestamps'],
    [{ timestamps: '1', interval: '0' }, 'interval'],
    [{ interval: 'x' }, 'interval'],
  ] as const) {
    it(`bad ${JSON.stringify(fields)}: 400 naming ${field}, no job started`, async () => {
      const before = await stored();
      const r = await postFrames(s.url, fields, video());
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.error.details.field).to.equal(field);
      expect(await stored()).to.deep.equal(before);
    });
  }

  it('a text file: 400 INVALID_FORMAT before any job', async () => {
    const before = await stored();
    const r = await postFrames(
      s.url,
      { timestamps: '1' },
      { bytes: Buffer.from('just some text, not a video\n'.repeat(50)), name: 'clip.mp4', type: 'video/mp4' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.code).to.equal('INVALID_FORMAT');
    expect(await stored()).to.deep.equal(before);
  });

  it('a sound file without a picture: 400 INVALID_FORMAT (no_video_stream)', async () => {
    const wav = path.join(dir, 'tone.wav');
    await ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', wav);
    const r = await postFrames(
      s.url,
      { timestamps: '0.5' },
      { bytes: readFileSync(wav), name: 'tone.wav', type: 'audio/wav' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error).to.deep.include({ code: 'INVALID_FORMAT' });
    expect(r.body.error.details.error_type).to.equal('no_video_stream');
  });
});
