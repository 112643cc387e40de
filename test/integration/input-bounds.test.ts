import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { buildPdf, parsePgm } from '../support/documents/pdf-factory';
import { postMultipart } from '../support/clients/pdf-http';
import { recordedJobs, startFileServer } from '../support/results';
import { grayPng } from '../support/documents/png';
import { renderPages } from '../../providers/pdf/render';

// Hostile inputs (issue #13 defects 1, 2, 4 and the same rules for audio and video) against the real API and
// worker, tesseract, poppler and ffmpeg: budgets read from headers refuse before any decoding, a corrupt image
// fails at once instead of being retried, oversized PDF pages render within the pixel budget, and no scratch file
// outlives its step. The budgets are small here (4 MP, 5 s) so the inputs stay cheap to make.

const MAX_PIXELS = 4_000_000;
const MAX_SECONDS = 5;

/** A real 1-bit grayscale PNG of `w`×`h` white pixels: a few KB that decode to `w*h` pixels. */
function bigPng(w: number, h: number): Buffer {
  const row = Buffer.alloc(1 + Math.ceil(w / 8), 0xff);
  row[0] = 0; // filter: none
  return grayPng(w, h, 1, deflateSync(Buffer.concat(Array.from({ length: h }, () => row))));
}

/** A 200×100 PNG whose pixel data is cut short: the header reads fine, decoding fails. */
function truncatedPng(): Buffer {
  const raw = Buffer.concat(
    Array.from({ length: 100 }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(200, 0xff)])),
  );
  return grayPng(200, 100, 8, deflateSync(raw).subarray(0, 10));
}

/** The attempt number each started activity of the job's workflow ended with, by activity type. */
async function activityAttempts(s: Stack, jobId: string): Promise<Map<string, number>> {
  const history = await s.worker.client.workflow.getHandle(jobId).fetchHistory();
  const types = new Map<string, string>();
  const attempts = new Map<string, number>();
  for (const e of history.events ?? []) {
    if (e.activityTaskScheduledEventAttributes)
      types.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    const started = e.activityTaskStartedEventAttributes;
    if (started) attempts.set(types.get(String(started.scheduledEventId)) ?? '', started.attempt ?? 0);
  }
  return attempts;
}

/** Every file (not directory) under `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('Input bounds: pixel and duration budgets, corrupt images, scratch files', function () {
  this.timeout(120_000);
  let s: Stack;
  let files: Awaited<ReturnType<typeof startFileServer>>;
  let dir: string;
  before(async function () {
    this.timeout(180_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'bounds-'));
    files = await startFileServer();
    s = await startStack({ MAX_IMAGE_PIXELS: String(MAX_PIXELS), MAX_MEDIA_SECONDS: String(MAX_SECONDS) });
  });
  after(async () => {
    await s?.stop();
    await files?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an image past MAX_IMAGE_PIXELS from its header with 422, before any job exists', async () => {
    const bomb = bigPng(3000, 3000); // 9 MP in about 2 KB
    expect(bomb.length).to.be.below(64 * 1024);
    const before = await recordedJobs(s.worker.store);
    const r = await postMultipart(
      `${s.url}/api/imageocr/process`,
      {},
      { bytes: bomb, name: 'bomb.png', type: 'image/png' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(422);
    expect(r.body.error.code).to.equal('UNPROCESSABLE_INPUT');
    expect(r.body.error.details).to.include({
      reason: 'image_too_large',
      width: 3000,
      height: 3000,
      pixels: 9_000_000,
      max_pixels: MAX_PIXELS,
    });
    expect(
      [...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id)),
      'no job was started',
    ).to.deep.equal([]);
  });

  it('refuses the same image from a URL in the job, in one attempt, without running tesseract', async () => {
    const url = files.put('bomb.png', bigPng(3000, 3000));
    const before = await recordedJobs(s.worker.store);
    const r = await s.call('POST', '/api/imageocr/process-url', { url });
    expect(r.status, JSON.stringify(r.body)).to.equal(422);
    expect(r.body.error.details).to.include({ reason: 'image_too_large' });
    const [jobId] = [...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id));
    expect((await activityAttempts(s, jobId)).get('ocrImageBlob')).to.equal(1);
  });

  it('answers an image tesseract cannot decode with 422 at once, not after retries', async () => {
    const before = await recordedJobs(s.worker.store);
    const r = await postMultipart(
      `${s.url}/api/imageocr/process`,
      {},
      { bytes: truncatedPng(), name: 'cut.png', type: 'image/png' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(422);
    expect(r.body.error.code).to.equal('UNPROCESSABLE_INPUT');
    expect(r.body.error.details).to.include({ reason: 'undecodable_image' });
    const [jobId] = [...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id));
    expect((await activityAttempts(s, jobId)).get('ocrImageBlob'), 'attempts of the OCR step').to.equal(1);
  });

  it('renders an oversized PDF page within the pixel budget and still reads it', async () => {
    // A 5000×5000 pt page would be 20833×20833 pixels (434 MP) at 300 dpi.
    const pdf = buildPdf({
      pages: [{ kind: 'runs', box: [5000, 5000], runs: [{ text: 'GIANT POSTER', x: 200, y: 2500, size: 500 }] }],
    });
    const file = path.join(dir, 'poster.pdf');
    writeFileSync(file, pdf);
    const [page] = await renderPages(file, [1], path.join(dir, 'render'), { maxPixels: MAX_PIXELS });
    const img = parsePgm(readFileSync(page.path));
    expect(img.width * img.height)
      .to.be.at.most(MAX_PIXELS)
      .and.above(MAX_PIXELS * 0.9);
    const r = await postMultipart(
      `${s.url}/api/pdf/process`,
      { extraction_method: 'local_ocr' },
      { bytes: pdf, name: 'poster.pdf', type: 'application/pdf' },
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 400)).to.equal(200);
    expect(r.body.data.extracted_text).to.match(/GIANT/i);
  });

  it('refuses a video whose frames exceed the budget and a recording longer than MAX_MEDIA_SECONDS', async () => {
    const video = path.join(dir, 'wide.mp4');
    execFileSync(
      'ffmpeg',
      ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=gray:s=2560x1600:d=1', '-c:v', 'mpeg4', video],
      { timeout: 60_000 },
    );
    const frames = await postMultipart(
      `${s.url}/api/video/frames`,
      { timestamps: '0.5' },
      { bytes: readFileSync(video), name: 'wide.mp4', type: 'video/mp4' },
    );
    expect(frames.status, JSON.stringify(frames.body)).to.equal(422);
    expect(frames.body.error.details).to.include({ reason: 'image_too_large', width: 2560, height: 1600 });

    const audio = path.join(dir, 'long.wav');
    execFileSync(
      'ffmpeg',
      ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=8', '-ar', '16000', audio],
      { timeout: 60_000 },
    );
    const before = await recordedJobs(s.worker.store);
    const r = await postMultipart(
      `${s.url}/api/audio/process`,
      {},
      { bytes: readFileSync(audio), name: 'long.wav', type: 'audio/wav' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(422);
    expect(r.body.error.details).to.include({ reason: 'too_long', max_seconds: MAX_SECONDS });
    expect(
      [...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id)),
      'no job was started',
    ).to.deep.equal([]);
  });

  it('keeps scratch files under the data directory, private, and removes them when each step ends', async () => {
    const root = s.worker.config.scratchDir;
    expect(root.startsWith(s.worker.config.dataDir + path.sep)).to.equal(true);
    expect(statSync(root).mode & 0o777).to.equal(0o700);
    for (const d of readdirSync(root)) expect(statSync(path.join(root, d)).mode & 0o777, d).to.equal(0o700);
    // The jobs above (PDF OCR, image OCR, frames) all ended: nothing of theirs is left.
    expect(filesUnder(root)).to.deep.equal([]);
  });
});
