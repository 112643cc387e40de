import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { AppError } from '../../core/errors';
import { decodeToWav } from '../../providers/media/audio';
import { extractFrames } from '../../providers/media/frames';
import { probeMedia } from '../../providers/media/probe';
import { ffmpeg } from '../support/media/media-factory';
import { postMultipart } from '../support/clients/pdf-http';

// ffmpeg and ffprobe read an upload as one self-contained file (providers/media/input-guard.ts): an HLS playlist or
// an ffconcat list that names a file elsewhere on this machine (another job's video) or a URL on loopback (a service
// on the private network) is refused, and neither the file's frames nor a request to the server come out of it.

async function rejection(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a rejection').to.be.instanceOf(AppError);
  return err as AppError;
}

describe('media inputs that name other resources (playlists, concat lists)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: http.Server;
  let base: string;
  const requests: string[] = [];
  let segment: Buffer;
  let playlist: string;
  let concatList: string;
  let s: Stack;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'media-input-guard-'));
    // "Another job's" video: an MPEG-TS clip with picture and sound elsewhere on the disk.
    const secret = path.join(dir, 'elsewhere', 'secret.ts');
    mkdirSync(path.dirname(secret));
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=2',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-c:v',
      'mpeg2video',
      '-c:a',
      'mp2',
      '-shortest',
      '-f',
      'mpegts',
      '-y',
      secret,
    );
    segment = readFileSync(secret);
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'video/mp2t', 'content-length': segment.length });
      res.end(segment);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    playlist = path.join(dir, 'upload-hls');
    writeFileSync(
      playlist,
      [
        '#EXTM3U',
        '#EXT-X-TARGETDURATION:2',
        '#EXTINF:2,',
        secret,
        '#EXTINF:2,',
        `${base}/segment.ts`,
        '#EXT-X-ENDLIST',
      ].join('\n') + '\n',
    );
    concatList = path.join(dir, 'elsewhere', 'upload-concat');
    writeFileSync(concatList, `ffconcat version 1.0\nfile secret.ts\nfile ${base}/segment.ts\n`);
    s = await startStack();
  });
  after(async () => {
    await s?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('ffprobe refuses an HLS playlist and an ffconcat list as unsupported, opening nothing they name', async () => {
    for (const file of [playlist, concatList]) {
      const err = await rejection(probeMedia(file));
      expect(err.code, file).to.equal('INVALID_FORMAT');
    }
    expect(requests).to.deep.equal([]);
  });

  it('ffmpeg decodes and takes frames from neither, and asks the loopback server nothing', async () => {
    const out = mkdtempSync(path.join(dir, 'out-'));
    for (const file of [playlist, concatList]) {
      await rejection(decodeToWav(file, path.join(out, 'a.wav')));
      await rejection(extractFrames(file, [0.5], out));
    }
    expect(requests).to.deep.equal([]);
  });

  it('a self-contained file is still read: the clip itself probes, decodes and gives frames', async () => {
    const clip = path.join(dir, 'elsewhere', 'secret.ts');
    const probe = await probeMedia(clip);
    expect(probe.video?.codec).to.equal('mpeg2video');
    const out = mkdtempSync(path.join(dir, 'ok-'));
    expect((await decodeToWav(clip, path.join(out, 'a.wav'))).duration).to.be.greaterThan(1.5);
    expect(await extractFrames(clip, [0.5], out)).to.have.length(1);
  });

  it('POST /api/video/frames with an uploaded playlist naming another file is 400 INVALID_FORMAT, no frames', async () => {
    const r = await postMultipart(
      `${s.url}/api/video/frames`,
      { timestamps: '0.5' },
      { bytes: readFileSync(playlist), name: 'clip.m3u8', type: 'application/vnd.apple.mpegurl' },
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 400)).to.equal(400);
    expect(r.body.error.code).to.equal('INVALID_FORMAT');
    expect(requests).to.deep.equal([]);
  });
});
