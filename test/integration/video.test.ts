import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { startTestApi } from '../support/servers/api';
import { responseChecker } from '../support/clients/openapi-schemas';
import { ffmpeg } from '../support/media/media-factory';
import { postMultipart } from '../support/clients/pdf-http';
import { SENTENCES, speak } from '../support/media/speech-samples';
import { wordErrorRate } from '../support/media/wer';
import { probeMedia } from '../../providers/media/probe';

// POST /api/video/process, POST /api/video/hosted and the `video` job type (spec §4.7) on the real API and worker, a
// Temporal dev server, real ffmpeg, the real local Whisper model and the real yt-dlp. The video is a generated test
// pattern with espeak-ng's speech as its sound; a static HTTP server on loopback serves it (plain and as a watch
// page naming it in schema.org JSON-LD, which yt-dlp's generic extractor reads).

type Reply = { status: number; body: any; headers: Headers };

const post = (url: string, fields: Record<string, string>, file?: { bytes: Buffer; name: string }): Promise<Reply> =>
  postMultipart(url, fields, file && { ...file, type: 'video/mp4' });

describe('Video transcription (POST /api/video/process and /hosted, job type video) on the real engines', function () {
  this.timeout(120_000);
  let s: Stack;
  let dir: string;
  let server: http.Server;
  let base: string;
  let video: Buffer;
  let silent: Buffer;
  let videoSeconds: number;
  /** The data of the first upload (the other entry points must give the same). */
  let first: any;
  const languages = { source_language: 'en', target_language: 'en' };
  const documented = (route: string, r: Reply) =>
    expect(
      responseChecker(s.api.app.openapi())('post', route, r.status, r.body),
      JSON.stringify(r.body).slice(0, 400),
    ).to.deep.equal([]);
  const ok = (route: string, r: Reply) => {
    expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
    documented(route, r);
    return r.body.data;
  };
  const upload = async () =>
    (first ??= ok(
      '/api/video/process',
      await post(`${s.url}/api/video/process`, languages, { bytes: video, name: 'talk.mp4' }),
    ));

  before(async function () {
    this.timeout(180_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'video-test-'));
    const wav = await speak(SENTENCES.en, 'en', dir, 'en');
    const mp4 = path.join(dir, 'talk.mp4');
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25',
      '-i',
      wav,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      mp4,
    );
    video = readFileSync(mp4);
    videoSeconds = (await probeMedia(mp4)).duration ?? 0;
    const quiet = path.join(dir, 'silent.mp4');
    await ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=2', '-pix_fmt', 'yuv420p', quiet);
    silent = readFileSync(quiet);
    server = http.createServer((req, res) => {
      const files: Record<string, Buffer> = { '/talk.mp4': video, '/silent.mp4': silent };
      if (files[req.url ?? '']) {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': files[req.url!].length });
        res.end(files[req.url!]);
      } else if (req.url === '/watch') {
        const ld = {
          '@context': 'https://schema.org',
          '@type': 'VideoObject',
          name: 'A walk in the park',
          description: 'Spoken by espeak-ng over a test pattern',
          author: { '@type': 'Person', name: 'Docproc Tests' },
          uploadDate: '2026-01-01',
          duration: `PT${Math.round(videoSeconds)}S`,
          contentUrl: `${base}/talk.mp4`,
          interactionStatistic: {
            '@type': 'InteractionCounter',
            interactionType: { '@type': 'WatchAction' },
            userInteractionCount: 4321,
          },
        };
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!DOCTYPE html><html><head><title>A walk in the park</title><script ` +
            `type="application/ld+json">${JSON.stringify(ld)}</script></head><body><p>clip</p></body></html>`,
        );
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    s = await startStack();
  });
  after(async () => {
    await s?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('transcribes an uploaded video (word error rate at most 30 %) and reads its duration, resolution, codec and fps', async () => {
    const d = await upload();
    expect(Object.keys(d).sort()).to.deep.equal(['duration', 'metadata', 'transcription']);
    expect(d.duration).to.be.closeTo(videoSeconds, 0.01);
    expect(wordErrorRate(SENTENCES.en, d.transcription), d.transcription).to.be.at.most(0.3);
    expect(d.metadata).to.deep.equal({ resolution: '320x240', codec: 'h264', fps: 25 });
  });

  it('downloads a URL in the job and transcribes it to the same data (a fresh transcription, not the cache)', async () => {
    const d = await upload();
    const r = await post(`${s.url}/api/video/process`, { ...languages, url: `${base}/talk.mp4`, useCache: 'false' });
    expect(ok('/api/video/process', r)).to.deep.equal(d);
    expect(r.headers.get('x-cache')).to.equal('miss');
  });

  it('takes the url as JSON too (the same video answered from the result cache)', async () => {
    const d = await upload();
    const r = await s.call('POST', '/api/video/process', { ...languages, url: `${base}/talk.mp4` });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data).to.deep.equal(d);
    expect(r.headers.get('x-cache')).to.equal('hit');
  });

  it("downloads a hosted page with yt-dlp: the platform's id, title, uploader, views and description with the transcription", async () => {
    const d = await upload();
    const r = await post(`${s.url}/api/video/hosted`, { ...languages, url: `${base}/watch` });
    const h = ok('/api/video/hosted', r);
    expect(h).to.deep.include({
      title: 'A walk in the park',
      duration: Math.round(videoSeconds),
      transcription: d.transcription,
    });
    expect(h.video_id).to.be.a('string').and.not.equal('');
    expect(h.metadata).to.deep.equal({
      uploader: 'Docproc Tests',
      views: 4321,
      description: 'Spoken by espeak-ng over a test pattern',
    });
  });

  it('refuses a video without sound with 400 INVALID_FORMAT before any job or upload exists; at a URL, the job fails with it', async () => {
    const before = {
      jobs: (await s.worker.store.list('jobs/')).length,
      uploads: (await s.worker.store.list('uploads/')).length,
    };
    const r = await post(`${s.url}/api/video/process`, languages, { bytes: silent, name: 'silent.mp4' });
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    documented('/api/video/process', r);
    expect(r.body.error.code).to.equal('INVALID_FORMAT');
    expect(r.body.error.details.error_type).to.equal('no_audio_stream');
    expect({
      jobs: (await s.worker.store.list('jobs/')).length,
      uploads: (await s.worker.store.list('uploads/')).length,
    }).to.deep.equal(before);
    const byUrl = await post(`${s.url}/api/video/process`, { ...languages, url: `${base}/silent.mp4` });
    expect(byUrl.status, JSON.stringify(byUrl.body)).to.equal(400);
    expect(byUrl.body.error.code).to.equal('INVALID_FORMAT');
  });

  it('asks for exactly one of file and url (400 VALIDATION_ERROR)', async () => {
    const neither = await post(`${s.url}/api/video/process`, languages);
    const both = await post(
      `${s.url}/api/video/process`,
      { ...languages, url: `${base}/talk.mp4` },
      { bytes: video, name: 'talk.mp4' },
    );
    for (const r of [neither, both]) {
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('runs as job type video through /api/jobs/ with the same data in results', async () => {
    const d = await upload();
    const file = path.join(dir, 'talk.mp4');
    const created = await s.call('POST', '/api/jobs/', {
      job_type: 'video',
      parameters: { filename: file, ...languages, use_cache: false },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const job = await s.waitJob(created.body.data.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results).to.deep.include(d);
    expect(job.results).to.include({ from_cache: false });
  });

  it('answers /api/video/hosted with 503 PROVIDER_NOT_CONFIGURED without yt-dlp, before any job', async () => {
    const api = await startTestApi({ YTDLP_PATH: path.join(dir, 'no-yt-dlp') });
    try {
      const r = await post(`${api.url}/api/video/hosted`, { url: `${base}/watch` });
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.error.code).to.equal('PROVIDER_NOT_CONFIGURED');
    } finally {
      await api.close();
    }
  });
});
