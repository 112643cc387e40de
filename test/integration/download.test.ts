import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../core/errors';
import { rejection } from '../support/assert';
import { downloadToFile } from '../../providers/http/download';
import type { OutboundPolicy } from '../../providers/http/ssrf';

const FILE = randomBytes(20_000);
/** The generated body's piece: `/generated?mb=N` sends it N times (N MiB), from memory it already holds. */
const MIB = randomBytes(1024 * 1024);
const generatedSha256 = (mb: number) => {
  const h = createHash('sha256');
  for (let i = 0; i < mb; i++) h.update(MIB);
  return h.digest('hex');
};

interface StaticServer {
  port: number;
  url: string;
  /** TCP connections accepted so far. */
  connections: number;
  paths: string[];
  close(): Promise<void>;
}

/**
 * A loopback server: `/file.png` (image/png), `/plain` (no content type), `/page.html`, `/big` (declared length over
 * any test limit), `/stream-big` (chunked, no length), `/missing` (404), `/broken` (500), `/redirect?to=<url>` (302),
 * `/busy` (503 with `Retry-After: 7`), `/stall` (headers and half the body, then nothing), `/generated?mb=N` (N MiB
 * with a declared length, streamed as the socket drains), `/trickle` (FILE in 20 pieces 60 ms apart), `/endless`
 * (chunked, never ends).
 */
async function startStaticServer(): Promise<StaticServer> {
  const state = { connections: 0, paths: [] as string[] };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    state.paths.push(u.pathname);
    switch (u.pathname) {
      case '/file.png':
        return res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': FILE.length }).end(FILE);
      case '/plain':
        return res.writeHead(200, { 'Content-Length': FILE.length }).end(FILE);
      case '/page.html':
        return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<html></html>');
      case '/big':
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 5_000_000 });
        return res.write(FILE);
      case '/stream-big': {
        res.writeHead(200, { 'Content-Type': 'image/png' });
        let sent = 0;
        const more = () => {
          while (sent < 200_000 && res.write(FILE)) sent += FILE.length;
          if (sent < 200_000) res.once('drain', more);
          else res.end();
        };
        return more();
      }
      case '/missing':
        return res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not here');
      case '/broken':
        return res.writeHead(500).end('oops');
      case '/busy':
        return res.writeHead(503, { 'Retry-After': '7' }).end('busy');
      case '/redirect':
        return res.writeHead(302, { Location: u.searchParams.get('to') ?? '/file.png' }).end();
      case '/generated': {
        const mb = Number(u.searchParams.get('mb') ?? 1);
        res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': mb * MIB.length });
        let sent = 0;
        const more = () => {
          while (sent < mb) {
            sent++;
            if (!res.write(MIB)) return void res.once('drain', more);
          }
          res.end();
        };
        return more();
      }
      case '/trickle': {
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': FILE.length });
        const piece = FILE.length / 20;
        let i = 0;
        const timer = setInterval(() => {
          res.write(FILE.subarray(i * piece, (i + 1) * piece));
          if (++i === 20) {
            clearInterval(timer);
            res.end();
          }
        }, 60);
        return res.on('close', () => clearInterval(timer));
      }
      case '/endless': {
        res.writeHead(200, { 'Content-Type': 'image/png' });
        const timer = setInterval(() => res.write(FILE), 10);
        return res.on('close', () => clearInterval(timer));
      }
      case '/stall':
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': FILE.length });
        return res.write(FILE.subarray(0, FILE.length / 2));
      default:
        return res.writeHead(404).end();
    }
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return state.connections;
    },
    paths: state.paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('guarded download to a file', function () {
  this.timeout(20_000);
  let a: StaticServer;
  let b: StaticServer;
  let dir: string;
  const open: OutboundPolicy = { allowPrivate: true };
  const closed: OutboundPolicy = { allowPrivate: false };
  const dest = () => path.join(dir, 'out.bin');
  const leftovers = () => fs.readdirSync(dir);

  before(async () => {
    [a, b] = await Promise.all([startStaticServer(), startStaticServer()]);
  });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'download-test-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('downloads a loopback file when private targets are allowed, with its size, type and final URL', async () => {
    const r = await downloadToFile(`${a.url}/file.png`, dest(), {
      policy: open,
      maxBytes: 1_000_000,
      accept: ['image/'],
    });
    expect(r).to.deep.equal({
      path: dest(),
      size: FILE.length,
      sha256: createHash('sha256').update(FILE).digest('hex'),
      mime: 'image/png',
      finalUrl: `${a.url}/file.png`,
    });
    expect(fs.readFileSync(dest()).equals(FILE)).to.equal(true);
    expect(leftovers()).to.deep.equal(['out.bin']);
  });

  it('follows a redirect and reports where it ended', async () => {
    const r = await downloadToFile(`${a.url}/redirect?to=${encodeURIComponent(`${b.url}/file.png`)}`, dest(), {
      policy: open,
      maxBytes: 1_000_000,
    });
    expect(r.finalUrl).to.equal(`${b.url}/file.png`);
    expect(fs.readFileSync(dest()).equals(FILE)).to.equal(true);
  });

  for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
    it(`refuses ${host} with 403 FORBIDDEN before connecting when private targets are not allowed`, async () => {
      const before = a.connections;
      const err = await rejection(
        downloadToFile(`http://${host}:${a.port}/file.png`, dest(), { policy: closed, maxBytes: 1_000_000 }),
      );
      expect(err).to.be.instanceOf(AppError);
      expect(err.code).to.equal('FORBIDDEN');
      expect(err.status).to.equal(403);
      expect(a.connections).to.equal(before);
      expect(leftovers()).to.deep.equal([]);
    });
  }

  it('checks every redirect hop again, refusing a private target reached through an allowed host', async () => {
    const policy: OutboundPolicy = { allowPrivate: false, allowedHosts: [`127.0.0.1:${a.port}`] };
    const ok = await downloadToFile(`${a.url}/file.png`, dest(), { policy, maxBytes: 1_000_000 });
    expect(ok.size).to.equal(FILE.length);
    fs.rmSync(dest());
    const beforeB = b.connections;
    for (const target of [`${b.url}/file.png`, `http://localhost:${a.port}/file.png`]) {
      a.paths.length = 0;
      const err = await rejection(
        downloadToFile(`${a.url}/redirect?to=${encodeURIComponent(target)}`, dest(), { policy, maxBytes: 1_000_000 }),
      );
      expect(err.code, target).to.equal('FORBIDDEN');
      expect(a.paths).to.deep.equal(['/redirect']);
    }
    expect(b.connections).to.equal(beforeB);
    expect(leftovers()).to.deep.equal([]);
  });

  for (const [what, route] of [
    ['a declared length', '/big'],
    ['a chunked body', '/stream-big'],
  ]) {
    it(`answers 413 with the limit for a body over maxBytes (${what}) and leaves no file`, async () => {
      const err = await rejection(downloadToFile(`${a.url}${route}`, dest(), { policy: open, maxBytes: 50_000 }));
      expect(err.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(err.status).to.equal(413);
      expect(err.details).to.include({ limit_bytes: 50_000 });
      expect(leftovers()).to.deep.equal([]);
    });
  }

  it('answers 502 with the upstream status for a 404 or a 500, without the query in the message', async () => {
    const err = await rejection(
      downloadToFile(`${a.url}/missing?token=secret-token-123`, dest(), { policy: open, maxBytes: 1_000_000 }),
    );
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.status).to.equal(502);
    expect(err.details).to.include({ status: 404 });
    expect(`${err.message} ${JSON.stringify(err.details)}`).to.not.include('secret-token-123');
    const err2 = await rejection(downloadToFile(`${a.url}/broken`, dest(), { policy: open, maxBytes: 1_000_000 }));
    expect(err2.details).to.include({ status: 500 });
    expect(leftovers()).to.deep.equal([]);
  });

  it('marks a 5xx as an outage to wait out (with its Retry-After) and a 404 as permanent', async () => {
    const missing = await rejection(downloadToFile(`${a.url}/missing`, dest(), { policy: open, maxBytes: 1_000_000 }));
    expect(missing.retryable).to.equal(false);
    const broken = await rejection(downloadToFile(`${a.url}/broken`, dest(), { policy: open, maxBytes: 1_000_000 }));
    expect([broken.retryable, broken.retryAfterMs]).to.deep.equal([true, undefined]);
    const busy = await rejection(downloadToFile(`${a.url}/busy`, dest(), { policy: open, maxBytes: 1_000_000 }));
    expect([busy.code, busy.retryable, busy.retryAfterMs]).to.deep.equal(['UPSTREAM_ERROR', true, 7000]);
    expect(busy.details).to.include({ status: 503, retry_after_ms: 7000 });
  });

  it('answers 502 when the body stalls past the timeout, within a bounded time and with no partial file', async () => {
    const t0 = Date.now();
    const err = await rejection(
      downloadToFile(`${a.url}/stall`, dest(), { policy: open, maxBytes: 1_000_000, timeoutMs: 300 }),
    );
    expect(Date.now() - t0).to.be.within(250, 3000);
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details).to.include({ reason: 'timeout' });
    expect(err.retryable, 'a timeout is an outage to wait out').to.equal(true);
    expect(leftovers()).to.deep.equal([]);
  });

  it('answers 502 when nothing listens on the port', async () => {
    const gone = await startStaticServer();
    await gone.close();
    const err = await rejection(
      downloadToFile(`${gone.url}/file.png`, dest(), { policy: open, maxBytes: 1_000_000, timeoutMs: 5000 }),
    );
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details).to.include({ reason: 'network' });
    expect(err.retryable, 'a refused connection is a wrong URL, not an outage').to.equal(false);
    expect(leftovers()).to.deep.equal([]);
  });

  it('refuses a media type outside accept with INVALID_FORMAT, but lets an untyped body through', async () => {
    const err = await rejection(
      downloadToFile(`${a.url}/page.html`, dest(), { policy: open, maxBytes: 1_000_000, accept: ['image/'] }),
    );
    expect(err.code).to.equal('INVALID_FORMAT');
    expect(err.details).to.include({ content_type: 'text/html' });
    expect(leftovers()).to.deep.equal([]);
    const r = await downloadToFile(`${a.url}/plain`, dest(), { policy: open, maxBytes: 1_000_000, accept: ['image/'] });
    expect(r.mime).to.equal('application/octet-stream');
  });

  it('answers 400 VALIDATION_ERROR for a URL that does not parse', async () => {
    const err = await rejection(downloadToFile('not a url', dest(), { policy: open, maxBytes: 1000 }));
    expect(err.code).to.equal('VALIDATION_ERROR');
  });

  it('streams bodies to their files: four 48 MiB downloads at once leave the heap and buffers near where they were', async function () {
    this.timeout(120_000);
    const mb = 48;
    global.gc?.();
    const base = process.memoryUsage();
    let peak = 0;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
    }, 20);
    try {
      const got = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          downloadToFile(`${a.url}/generated?mb=${mb}`, path.join(dir, `big-${i}.pdf`), {
            policy: open,
            maxBytes: 64 * 1024 * 1024,
          }),
        ),
      );
      for (const [i, r] of got.entries()) {
        expect(r.size).to.equal(mb * MIB.length);
        expect(fs.statSync(path.join(dir, `big-${i}.pdf`)).size).to.equal(mb * MIB.length);
      }
    } finally {
      clearInterval(sample);
    }
    // Buffered, the bodies alone were 4 x 48 MiB (twice that while concatenated); streamed, a few pieces each.
    expect(peak / 1024 / 1024, 'MiB of heap and buffers above the start').to.be.below(64);
  });

  it('computes the sha256 of the body while it streams', async () => {
    const r = await downloadToFile(`${a.url}/generated?mb=3`, dest(), { policy: open, maxBytes: 8 * 1024 * 1024 });
    expect(r.sha256).to.equal(generatedSha256(3));
    expect(createHash('sha256').update(fs.readFileSync(dest())).digest('hex')).to.equal(r.sha256);
  });

  it('lets a slow steady body take longer than the timeout, which bounds the pauses only', async () => {
    const t0 = Date.now();
    const r = await downloadToFile(`${a.url}/trickle`, dest(), { policy: open, maxBytes: 1_000_000, timeoutMs: 600 });
    expect(Date.now() - t0, 'the body took longer than the timeout').to.be.above(600);
    expect(fs.readFileSync(dest()).equals(FILE)).to.equal(true);
    expect(r.size).to.equal(FILE.length);
  });

  it('stops at once when its signal aborts mid-body (a cancelled activity), leaving no partial file', async () => {
    const abort = new AbortController();
    const reason = new Error('activity cancelled');
    const t0 = Date.now();
    const pending = downloadToFile(`${a.url}/endless`, dest(), {
      policy: open,
      maxBytes: 1024 * 1024 * 1024,
      signal: abort.signal,
    });
    // Wait until part of the body is on disk, then cancel.
    while (!leftovers().some((f) => f.startsWith('out.bin.part-') && fs.statSync(path.join(dir, f)).size > 0)) {
      expect(Date.now() - t0, 'no partial file appeared').to.be.below(15_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    abort.abort(reason);
    const err = await rejection(pending);
    expect(err).to.equal(reason);
    expect(leftovers()).to.deep.equal([]);
  });
});
