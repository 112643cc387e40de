import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ffmpeg } from '../media/media-factory';
import { buildPdf } from '../documents/pdf-factory';
import { SENTENCES, speak } from '../media/speech-samples';

/**
 * A conference website on 127.0.0.1 for the session tests: session pages (navigation and footer around a `<main>`),
 * a short video whose sound is espeak-ng's speech, a PDF of two slides and a page linking it. Counts requests per path;
 * a path can be held (answered only once released) or broken (404) for a while.
 */
export interface SessionSite {
  base: string;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  count(p: string): number;
  /** Answers for `p` wait until `release(p)`. */
  hold(p: string): void;
  release(p: string): void;
  /** `p` answers 404 until `fix(p)`. */
  breakPath(p: string): void;
  fix(p: string): void;
  /** The PDF's slide texts and the spoken sentence. */
  slides: string[];
  spoken: string;
  close(): Promise<void>;
}

const SLIDES = ['Open maps for everyone', 'Vector tiles served from a single laptop'];

/** A session page: chrome that must not reach the Markdown, and the session's abstract in `<main>`. */
export const sessionPage = (title: string, abstract: string): string =>
  `<!DOCTYPE html><html><head><title>${title}</title><style>p{color:red}</style></head><body>` +
  '<nav><a href="/">Navigation menu home</a></nav><header>Site banner text</header>' +
  `<main><h1>${title}</h1><p>${abstract}</p></main><footer>Footer imprint text</footer></body></html>`;

export async function startSessionSite(opts: { video?: boolean } = {}): Promise<SessionSite> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'session-site-'));
  let video: Buffer | null = null;
  if (opts.video !== false) {
    const wav = await speak(SENTENCES.en, 'en', dir, 'talk');
    const mp4 = path.join(dir, 'talk.mp4');
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10',
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
  }
  const pdf = buildPdf({
    pages: SLIDES.map((line) => ({ kind: 'lines' as const, lines: [line], size: 24 })),
    title: 'Slides',
  });
  const hits = new Map<string, number>();
  const held = new Map<string, (() => void)[]>();
  const holding = new Set<string>();
  const broken = new Set<string>();
  let base = '';

  const serve = (p: string, res: http.ServerResponse) => {
    if (broken.has(p)) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    if (p === '/talk.mp4' && video)
      return res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).end(video);
    if (p === '/files/slides.pdf')
      return res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length }).end(pdf);
    if (p === '/attachments') {
      return res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<html><body><a href="/files/slides.pdf">Slides (PDF)</a> <a href="/about">About</a> <a ` +
            `href="${base}/files/slides.pdf#page=2">again</a></body></html>`,
        );
    }
    const m = /^\/(?:s|slow)\/([a-z0-9-]+)$/.exec(p);
    if (m)
      return res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(sessionPage(`Session ${m[1]}`, `Abstract of ${m[1]}: how volunteers map the city.`));
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  };
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    if (holding.has(p) || p.startsWith('/slow/')) {
      if (holding.has(p) || holding.has('/slow/*')) {
        held.set(p, [...(held.get(p) ?? []), () => serve(p, res)]);
        return;
      }
    }
    serve(p, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const releaseAll = (p: string) => {
    for (const [k, waiting] of held) {
      if (k === p || (p === '/slow/*' && k.startsWith('/slow/'))) {
        held.delete(k);
        for (const w of waiting) w();
      }
    }
  };
  return {
    base,
    hits,
    count: (p) => hits.get(p) ?? 0,
    hold: (p) => void holding.add(p),
    release: (p) => {
      holding.delete(p);
      releaseAll(p);
    },
    breakPath: (p) => void broken.add(p),
    fix: (p) => void broken.delete(p),
    slides: SLIDES,
    spoken: SENTENCES.en,
    close: async () => {
      for (const p of [...holding]) releaseAll(p);
      holding.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
