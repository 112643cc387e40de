import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig, ytDlpPath } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { downloadHosted } from '../../providers/media/hosted';
import { probeMedia } from '../../providers/media/probe';
import { ffmpeg } from '../support/media/media-factory';

// providers/media/hosted.ts with the real yt-dlp of the engine cache (scripts/engines-speech.mjs) against a static
// HTTP server on loopback: a generated mp4 and a watch page that names it in schema.org JSON-LD, which yt-dlp's
// generic extractor reads (title, uploader, views, description, duration).

const ytDlp = ytDlpPath(loadConfig({ ...process.env }));
const open = { allowPrivate: true };

/** A watch page naming its video in schema.org JSON-LD, which yt-dlp's generic extractor reads. */
function watchPage(contentUrl: string): string {
  const ld = { '@context': 'https://schema.org', '@type': 'VideoObject', name: 'Elsewhere', contentUrl };
  return `<!DOCTYPE html><html><head><title>Elsewhere</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body></body></html>`;
}

async function rejection(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a rejection').to.be.instanceOf(AppError);
  return err as AppError;
}

describe('hosted video downloads (yt-dlp)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: http.Server;
  let base: string;
  let video: Buffer;
  const requests: string[] = [];
  /** Further pages and redirects of the site, by path (set by the suites below). */
  const pages = new Map<string, string>();
  const redirects = new Map<string, string>();

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hosted-test-'));
    const mp4 = path.join(dir, 'video.mp4');
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=3',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=3',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      '-y',
      mp4,
    );
    video = readFileSync(mp4);
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const page = pages.get(req.url ?? '');
      const redirect = redirects.get(req.url ?? '');
      if (page) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page);
      } else if (redirect) {
        res.writeHead(302, { location: redirect });
        res.end();
      } else if (req.url === '/video.mp4') {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
        res.end(video);
      } else if (req.url === '/watch') {
        const ld = {
          '@context': 'https://schema.org',
          '@type': 'VideoObject',
          name: 'Test pattern',
          description: 'A generated test pattern',
          author: { '@type': 'Person', name: 'Docproc Tests' },
          uploadDate: '2026-01-01',
          duration: 'PT3S',
          contentUrl: `${base}/video.mp4`,
          interactionStatistic: {
            '@type': 'InteractionCounter',
            interactionType: { '@type': 'WatchAction' },
            userInteractionCount: 1234,
          },
        };
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!DOCTYPE html><html><head><title>Test pattern</title><script ` +
            `type="application/ld+json">${JSON.stringify(ld)}</script></head><body><p>clip</p></body></html>`,
        );
      } else if (req.url === '/busy.mp4') {
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
        res.end('busy');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  const outDir = () => mkdtempSync(path.join(dir, 'out-'));

  it('downloads a watch page’s video with its metadata', async () => {
    const r = await downloadHosted(`${base}/watch`, outDir(), { ytDlp, policy: open, format: 'audio' });
    expect(readFileSync(r.file).equals(video)).to.equal(true);
    expect(r.metadata).to.deep.equal({
      video_id: 'watch',
      title: 'Test pattern',
      uploader: 'Docproc Tests',
      views: 1234,
      description: 'A generated test pattern',
      duration: 3,
    });
  });

  it('downloads a direct media link (the metadata the link has)', async () => {
    const r = await downloadHosted(`${base}/video.mp4`, outDir(), { ytDlp, policy: open });
    expect(path.basename(r.file)).to.equal('media.mp4');
    expect((await probeMedia(r.file)).video?.codec).to.equal('h264');
    expect(r.metadata.video_id).to.equal('video');
    expect(r.metadata.title).to.equal('video');
  });

  it('a 404 is UPSTREAM_ERROR', async () => {
    const err = await rejection(downloadHosted(`${base}/missing.mp4`, outDir(), { ytDlp, policy: open }));
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details).to.include({ provider: 'hosted_video', reason: 'downloader' });
    expect(err.message).to.match(/404/);
    expect(err.retryable, 'a 404 is permanent').to.equal(false);
  });

  it('a 503 is UPSTREAM_ERROR marked as an outage to wait out', async () => {
    const err = await rejection(downloadHosted(`${base}/busy.mp4`, outDir(), { ytDlp, policy: open }));
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.message).to.match(/503/);
    expect(err.retryable).to.equal(true);
  });

  it('a file over the size limit is PAYLOAD_TOO_LARGE and leaves no media', async () => {
    const out = outDir();
    const err = await rejection(downloadHosted(`${base}/video.mp4`, out, { ytDlp, policy: open, maxBytes: 1024 }));
    expect(err.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(err.details).to.include({ limit_bytes: 1024 });
    expect(readdirSync(out).filter((f) => f.startsWith('media.'))).to.deep.equal([]);
  });

  it('refuses private and metadata addresses through the classifier, before yt-dlp connects', async () => {
    const closed = { allowPrivate: false };
    const seen = requests.length;
    const local = await rejection(downloadHosted(`${base}/watch`, outDir(), { ytDlp, policy: closed }));
    expect(local.code).to.equal('FORBIDDEN');
    expect(requests.length, 'the loopback server was not asked').to.equal(seen);
    const metadata = await rejection(
      downloadHosted('http://169.254.169.254/latest/meta-data/', outDir(), { ytDlp, policy: closed }),
    );
    expect(metadata.code).to.equal('FORBIDDEN');
    expect(metadata.details).to.include({ host: '169.254.169.254' });
  });

  describe('behind the guard: every address yt-dlp connects to is checked (its loopback proxy)', () => {
    // Server B stands for a service on the private network; only the "platform" A (this suite's site) is allowed.
    let b: http.Server;
    let bBase: string;
    const bRequests: string[] = [];
    let guarded: { allowPrivate: false; allowedHosts: string[] };

    before(async () => {
      b = http.createServer((req, res) => {
        bRequests.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
        res.end(video);
      });
      await new Promise<void>((resolve) => b.listen(0, '127.0.0.1', resolve));
      const bPort = (b.address() as AddressInfo).port;
      bBase = `http://127.0.0.1:${bPort}`;
      guarded = { allowPrivate: false, allowedHosts: [new URL(base).host] };
      pages.set('/watch-elsewhere', watchPage(`${bBase}/video.mp4`));
      redirects.set('/redirect.mp4', `${bBase}/video.mp4`);
      redirects.set('/redirect-dot.mp4', `http://localhost.:${bPort}/video.mp4`);
    });
    after(async () => {
      b?.closeAllConnections();
      await new Promise((resolve) => b?.close(resolve));
    });

    it('still downloads a page and its media on an allowed host', async () => {
      const r = await downloadHosted(`${base}/watch`, outDir(), { ytDlp, policy: guarded, format: 'audio' });
      expect(readFileSync(r.file).equals(video)).to.equal(true);
      expect(r.metadata.title).to.equal('Test pattern');
    });

    it('a page naming media on a refused address fails FORBIDDEN, and that address is never asked', async () => {
      const out = outDir();
      const err = await rejection(downloadHosted(`${base}/watch-elsewhere`, out, { ytDlp, policy: guarded }));
      expect(err.code).to.equal('FORBIDDEN');
      expect(err.details).to.include({ host: new URL(bBase).host });
      expect(bRequests).to.deep.equal([]);
      expect(readdirSync(out).filter((f) => f.startsWith('media.'))).to.deep.equal([]);
    });

    it('a redirect to a refused address, however it is spelt, fails FORBIDDEN without reaching it', async () => {
      for (const p of ['/redirect.mp4', '/redirect-dot.mp4']) {
        const err = await rejection(downloadHosted(`${base}${p}`, outDir(), { ytDlp, policy: guarded }));
        expect(err.code, p).to.equal('FORBIDDEN');
      }
      expect(bRequests).to.deep.equal([]);
    });
  });

  it('without yt-dlp: PROVIDER_NOT_CONFIGURED', async () => {
    const missing = path.join(dir, 'no-such-yt-dlp');
    const err = await rejection(downloadHosted(`${base}/watch`, outDir(), { ytDlp: missing, policy: open }));
    expect(err.code).to.equal('PROVIDER_NOT_CONFIGURED');
    const notExecutable = path.join(dir, 'yt-dlp.txt');
    writeFileSync(notExecutable, 'not a program');
    expect(
      (await rejection(downloadHosted(`${base}/watch`, outDir(), { ytDlp: notExecutable, policy: open }))).code,
    ).to.equal('PROVIDER_NOT_CONFIGURED');
  });
});
