import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { llmEnv } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { accuracy as charAccuracy } from '../support/documents/accuracy';
import { buildPdf, wrapText } from '../support/documents/pdf-factory';
import { SMALL_HTML, transformerJob, until } from '../support/jobs';
import { startWebhookReceiver } from '../support/servers/webhook-receiver';

// /api/imageocr (spec §4.10, contract §1, §2) on the real API and worker over loopback HTTP, on a Temporal dev
// server, with real tesseract; images are rendered by poppler from generated PDFs and converted by ffmpeg. The only
// stand-ins are the wire-protocol LLM server (templates) and a static HTTP server for /process-url.

const PARAGRAPHS = [
  'Über die Brücke gingen früh am Morgen zwei ältere Männer, die sich über das schöne Wetter freuten. ' +
    'Sie trugen schwere Körbe voller Äpfel, Birnen und süßer Pflaumen zum Markt in der Stadtmitte.',
  'Dort öffneten die Händler gerade ihre Stände, während aus der Bäckerei der Duft von frischem Brot ' +
    'über den Platz zog. Ein Mädchen zählte die Münzen in ihrer Geldbörse und überlegte, ob sie Blumen ' +
    'für ihre Großmutter kaufen sollte.',
  'Am Nachmittag füllte sich der Marktplatz mit Familien, die Kuchen aßen und Kaffee tranken. Die Kinder ' +
    'spielten am Brunnen, während die Erwachsenen über die Ernte, das Wetter und die Preise für Gemüse sprachen.',
  'Der Bürgermeister hielt eine kurze Rede über die Zukunft der Gemeinde. Er versprach neue Wege, eine größere ' +
    'Schule und mehr Grünflächen für alle Bürgerinnen und Bürger, die hier wohnen und arbeiten möchten.',
  'Als es dunkel wurde, leuchteten die Laternen über den Gassen, und die Musikanten spielten fröhliche Lieder. ' +
    'Niemand wollte nach Hause gehen, denn der Abend war mild, die Luft roch nach Blüten und die Stimmung war gut.',
  'Am nächsten Morgen räumten die Händler ihre Stände wieder ab. Sie zählten ihre Einnahmen, luden die übrigen ' +
    'Waren auf ihre Wagen und fuhren zurück in die Dörfer, aus denen sie gekommen waren, müde, aber zufrieden.',
  'Die Zeitung berichtete später ausführlich über das Fest. Viele Leserinnen und Leser schrieben Briefe, in denen ' +
    'sie sich für das gelungene Wochenende bedankten und fragten, ob es im nächsten Jahr wiederholt würde.',
  'Der Gemeinderat beschloss daraufhin, den Markt künftig zweimal im Jahr abzuhalten: einmal im Frühling, wenn ' +
    'die ersten Blumen blühen, und einmal im Herbst, wenn die Äpfel reif sind und die Blätter sich färben.',
  'Für das erste Frühlingsfest meldeten sich schon im Januar über vierzig Händler an. Die Organisatoren ' +
    'mussten zusätzliche Flächen an der Uferstraße öffnen, damit alle Stände genügend Platz bekamen.',
  'Auch die Vereine der Stadt wollten sich beteiligen: Der Chor übte neue Lieder, die Feuerwehr plante ' +
    'eine Vorführung, und der Sportverein bereitete einen Lauf rund um den alten Stadtgraben vor.',
];
const TEXT = PARAGRAPHS.join(' ');
// Longer than the 2000 characters a workflow result carries in its summary: the answer must hold all of it.
const LINES = PARAGRAPHS.flatMap((p) => [...wrapText(p, 78), '']);

/** Character accuracy, line-end hyphens joined first. */
const accuracy = (expected: string, actual: string) => charAccuracy(expected, actual.replace(/-\n/g, ''));

/** Posts multipart to `path` with an optional file; answers status and parsed body. */
async function postForm(
  base: string,
  route: string,
  fields: Record<string, string>,
  file?: { bytes: Buffer; name: string; type: string },
  headers: Record<string, string> = {},
) {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(base + route, { method: 'POST', body: form, headers, signal: AbortSignal.timeout(90_000) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (b: Buffer) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

const ok = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(200);
  expect(r.body.status).to.equal('success');
  return r.body.data;
};
const err = (r: { status: number; body: any }, status: number, code: string) => {
  expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(status);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal(code);
  return r.body.error;
};

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('Image OCR endpoints on the real engine', function () {
  this.timeout(60_000);
  let s: Stack;
  let llm: LlmServer;
  let dir: string;
  let png: Buffer;
  let jpeg: Buffer;
  let files: http.Server;
  let filesUrl: string;
  const served: string[] = [];

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'imageocr-test-'));
    const pdf = buildPdf({ pages: [{ kind: 'lines', lines: LINES, size: 11, leading: 15, x: 50, top: 800 }] });
    writeFileSync(path.join(dir, 'text.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', '150', '-png', '-singlefile', path.join(dir, 'text.pdf'), path.join(dir, 'page')], {
      timeout: 30_000,
    });
    png = readFileSync(path.join(dir, 'page.png'));
    execFileSync(
      'ffmpeg',
      ['-v', 'error', '-y', '-i', path.join(dir, 'page.png'), '-q:v', '2', path.join(dir, 'page.jpg')],
      { timeout: 30_000 },
    );
    jpeg = readFileSync(path.join(dir, 'page.jpg'));

    files = http.createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url === '/page.png') return void res.writeHead(200, { 'Content-Type': 'image/png' }).end(png);
      if (req.url === '/page.html')
        return void res
          .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
          .end('<html><body>not an image</body></html>');
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

    llm = await startLlmServer();
    s = await startStack(llmEnv(llm));
  });
  after(async () => {
    await s?.stop();
    await llm?.close();
    await new Promise<void>((r) => (files ? files.close(() => r()) : r()));
    files?.closeAllConnections();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('POST /api/imageocr/process', () => {
    /** The test page as a PNG upload with these fields. */
    const postPng = (fields: Record<string, string>) =>
      postForm(s.url, '/api/imageocr/process', fields, { bytes: png, name: 'page.png', type: 'image/png' });

    it('recognises the German text of a 150 dpi PNG with at least 95 % accuracy and reports its size, format and dpi', async () => {
      const data = ok(
        await postForm(s.url, '/api/imageocr/process', {}, { bytes: png, name: 'page.png', type: 'image/png' }),
      );
      expect(TEXT.length).to.be.greaterThan(2000);
      expect(accuracy(TEXT, data.extracted_text), data.extracted_text.slice(0, 300)).to.be.at.least(0.95);
      expect(data.extracted_text).to.include('Brücke').and.include('Großmutter').and.include('Stadtgraben vor.');
      // A4 at 150 dpi: 595 × 842 pt → about 1240 × 1754 px, exactly what poppler wrote.
      expect(pngSize(png).width).to.be.within(1235, 1245);
      expect(data.metadata).to.include({ ...pngSize(png), format: 'png', dpi: 150 });
    });

    it('refuses an OCR language that is not installed with 422 language_not_installed naming it and the installed ones, never a fallback', async () => {
      for (const language of ['ja', 'xx', 'de+ko']) {
        const r = await postForm(
          s.url,
          '/api/imageocr/process',
          { ocr_language: language },
          { bytes: png, name: 'page.png', type: 'image/png' },
        );
        expect(r.status, `${language}: ${JSON.stringify(r.body)}`).to.equal(422);
        expect(r.body.error.code).to.equal('UNPROCESSABLE_INPUT');
        expect(r.body.error.details).to.include({ reason: 'language_not_installed' });
        expect(r.body.error.details.language).to.equal(language === 'de+ko' ? 'ko' : language);
        expect(r.body.error.details.installed).to.include.members(['deu', 'eng']);
      }
      // An installed one by its ISO code or its tesseract code reads the page (French is provisioned by default too).
      for (const language of ['de', 'deu+eng', 'de+fr']) {
        const data = ok(
          await postForm(
            s.url,
            '/api/imageocr/process',
            { ocr_language: language, useCache: 'false' },
            { bytes: png, name: 'page.png', type: 'image/png' },
          ),
        );
        expect(data.extracted_text).to.include('Brücke');
      }
    });

    it('turns an image photographed upside down before OCR and reports the rotation; an upright one has none', async () => {
      const flipped = path.join(dir, 'upside-down.png');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', path.join(dir, 'page.png'), '-vf', 'hflip,vflip', flipped], {
        timeout: 30_000,
      });
      const data = ok(
        await postForm(
          s.url,
          '/api/imageocr/process',
          { useCache: 'false' },
          { bytes: readFileSync(flipped), name: 'flipped.png', type: 'image/png' },
        ),
      );
      expect(accuracy(TEXT, data.extracted_text), data.extracted_text.slice(0, 300)).to.be.at.least(0.95);
      expect(data.metadata.rotation).to.equal(180);
      const upright = ok(
        await postForm(
          s.url,
          '/api/imageocr/process',
          { useCache: 'false' },
          { bytes: png, name: 'page.png', type: 'image/png' },
        ),
      );
      expect(upright.metadata).to.not.have.property('rotation');
    });

    it('reports the format of a JPEG as jpeg and still recognises its text', async () => {
      const data = ok(
        await postForm(s.url, '/api/imageocr/process', {}, { bytes: jpeg, name: 'page.jpg', type: 'image/jpeg' }),
      );
      expect(data.metadata).to.include({ ...pngSize(png), format: 'jpeg' });
      expect(data.metadata.dpi).to.be.a('number');
      expect(accuracy(TEXT, data.extracted_text)).to.be.at.least(0.95);
    });

    it('with output_format=markdown adds the Markdown and its blocks, boxed in the image pixels in reading order', async () => {
      const text = ok(await postPng({}));
      expect(text).to.not.have.property('markdown');
      expect(text).to.not.have.property('blocks');
      // Not the text answer's cache entry: the Markdown is its own.
      const data = ok(await postPng({ output_format: 'markdown' }));
      expect(data.extracted_text).to.equal(text.extracted_text);
      expect(accuracy(TEXT, data.markdown)).to.be.at.least(0.95);
      const blocks: { type: string; text: string; bbox: number[]; order: number }[] = data.blocks;
      // Ten paragraphs, one block each, and the Markdown is their text in order.
      expect(blocks.map((b) => b.type)).to.deep.equal(PARAGRAPHS.map(() => 'paragraph'));
      expect(blocks.map((b) => b.order)).to.deep.equal(blocks.map((_, i) => i));
      expect(data.markdown.trim()).to.equal(blocks.map((b) => b.text).join('\n\n'));
      PARAGRAPHS.forEach((p, i) => expect(accuracy(p, blocks[i].text), blocks[i].text).to.be.at.least(0.9));
      // Pixels, not points: the text starts 50 pt from the left edge, 104 px at 150 dpi; boxes go down the page.
      const { width, height } = pngSize(png);
      expect(blocks[0].bbox[0]).to.be.within(98, 112);
      for (const [i, b] of blocks.entries()) {
        expect(b.bbox[0]).to.be.below(b.bbox[2]);
        expect(b.bbox[1]).to.be.below(b.bbox[3]);
        expect(b.bbox[2]).to.be.at.most(width);
        expect(b.bbox[3]).to.be.at.most(height);
        if (i) expect(b.bbox[1]).to.be.above(blocks[i - 1].bbox[3] - 2);
      }
      // The first paragraph: three lines of 11 pt type at 15 pt leading, about 2 × 31 px + one line's 25 px at 150 dpi.
      expect(blocks[0].bbox[3] - blocks[0].bbox[1]).to.be.within(75, 105);
      // The cached answer is the same.
      const again = ok(await postPng({ output_format: 'markdown' }));
      expect(again).to.deep.equal(data);
    });

    it('refuses an output_format it does not know with 400 naming it', async () => {
      const e = err(await postPng({ output_format: 'html' }), 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(e)).to.include('output_format').and.include('html');
    });

    it('refuses an upload that is not an image with 400 INVALID_FORMAT listing the supported formats', async () => {
      const e = err(
        await postForm(
          s.url,
          '/api/imageocr/process',
          {},
          { bytes: Buffer.from('just some words, not pixels\n'), name: 'notes.txt', type: 'text/plain' },
        ),
        400,
        'INVALID_FORMAT',
      );
      expect(e.details.supported_formats).to.include.members(['png', 'jpeg']);
    });

    it('refuses an empty file with 400', async () => {
      const r = await postForm(
        s.url,
        '/api/imageocr/process',
        {},
        { bytes: Buffer.alloc(0), name: 'empty.png', type: 'image/png' },
      );
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.status).to.equal('error');
    });

    it('refuses a request without a file with 400 VALIDATION_ERROR', async () => {
      const e = err(await postForm(s.url, '/api/imageocr/process', { use_cache: 'true' }), 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(e.details.issues)).to.include('file');
    });

    it('fills a shipped template from the recognised text when template is PdfMetadata', async () => {
      llm.reset();
      const data = ok(
        await postForm(
          s.url,
          '/api/imageocr/process',
          { template: 'PdfMetadata' },
          { bytes: png, name: 'page.png', type: 'image/png' },
        ),
      );
      expect(data.extracted_text).to.include('# title value').and.include('summary value');
      expect(data.extracted_text).to.not.include('{{');
      expect(data.metadata).to.include({ format: 'png', dpi: 150 });
      const chats = llm.chatRequests();
      expect(chats.length).to.be.at.least(1);
      expect(JSON.stringify(chats[0].json.messages)).to.include('Brücke');
    });
  });

  describe('POST /api/imageocr/process-url', () => {
    it('recognises the same text from a loopback URL, since the test API listens on loopback only', async () => {
      const data = ok(await s.call('POST', '/api/imageocr/process-url', { url: `${filesUrl}/page.png` }));
      expect(accuracy(TEXT, data.extracted_text)).to.be.at.least(0.95);
      expect(data.metadata).to.include({ ...pngSize(png), format: 'png', dpi: 150 });
      expect(served).to.include('/page.png');
    });

    it('refuses ftp and file URLs with 400 VALIDATION_ERROR', async () => {
      for (const url of ['ftp://127.0.0.1/page.png', 'file:///etc/passwd']) {
        err(await s.call('POST', '/api/imageocr/process-url', { url }), 400, 'VALIDATION_ERROR');
      }
    });

    it('answers 502 UPSTREAM_ERROR for a URL whose port is closed', async () => {
      const port = await closedPort();
      const e = err(
        await s.call('POST', '/api/imageocr/process-url', { url: `http://127.0.0.1:${port}/page.png` }),
        502,
        'UPSTREAM_ERROR',
      );
      expect(e.message).to.not.include('/page.png');
    });

    it('answers 502 UPSTREAM_ERROR for a URL that answers 404', async () => {
      const e = err(
        await s.call('POST', '/api/imageocr/process-url', { url: `${filesUrl}/missing.png` }),
        502,
        'UPSTREAM_ERROR',
      );
      expect(e.details.status).to.equal(404);
    });

    it('answers 400 INVALID_FORMAT for a URL that serves text/html', async () => {
      const e = err(
        await s.call('POST', '/api/imageocr/process-url', { url: `${filesUrl}/page.html` }),
        400,
        'INVALID_FORMAT',
      );
      expect(e.details.content_type).to.equal('text/html');
    });
  });

  describe('on a server that does not listen on loopback only', () => {
    const KEY = 'imageocr-test-service-key-0123456789';
    let open: Stack;

    before(async function () {
      this.timeout(120_000);
      // HOST reaches both the API's and the worker's configuration; the test socket still binds 127.0.0.1.
      open = await startStack({ HOST: '0.0.0.0', SERVICE_API_KEY: KEY });
      expect(open.api.config.loopbackOnly).to.equal(false);
      expect(open.worker.config.loopbackOnly).to.equal(false);
    });
    after(async () => {
      await open?.stop();
    });

    it('refuses loopback image URLs by address and by name with 403 FORBIDDEN and never fetches them', async () => {
      const port = (files.address() as AddressInfo).port;
      served.length = 0;
      for (const url of [
        `http://127.0.0.1:${port}/x.png`,
        `http://localhost:${port}/x.png`,
        // Every spelling of the same address is refused the same way (a trailing-dot name answered 502 before).
        `http://localhost.:${port}/x.png`,
        `http://LOCALHOST.:${port}/x.png`,
        `http://app.localhost:${port}/x.png`,
        `http://127.1:${port}/x.png`,
        `http://0x7f.1:${port}/x.png`,
        `http://2130706433:${port}/x.png`,
        `http://0.0.0.0:${port}/x.png`,
        `http://[::ffff:127.0.0.1]:${port}/x.png`,
      ]) {
        err(
          await open.call('POST', '/api/imageocr/process-url', { url }, { 'X-Service-Api-Key': KEY }),
          403,
          'FORBIDDEN',
        );
      }
      expect(served).to.deep.equal([]);
    });

    it('asks for the API key before anything else', async () => {
      err(await open.call('POST', '/api/imageocr/process-url', { url: `${filesUrl}/page.png` }), 401, 'UNAUTHORIZED');
    });
  });
  describe('in the compose layout: the API on 0.0.0.0 with a key, the worker with no HOST and the default policy', () => {
    const KEY = 'imageocr-compose-service-key-0123456789';
    let compose: Stack;

    before(async function () {
      this.timeout(120_000);
      // docker-compose.yml sets HOST for the API alone, and ALLOW_PRIVATE_URLS (default false) for every process.
      compose = await startStack(
        { HOST: '0.0.0.0', SERVICE_API_KEY: KEY, ALLOW_PRIVATE_URLS: 'false' },
        { worker: { HOST: undefined } },
      );
      expect(compose.worker.config.HOST).to.equal('127.0.0.1');
    });
    after(async () => {
      await compose?.stop();
    });

    it('the worker refuses loopback URL inputs with 403 FORBIDDEN, whatever HOST it has, and never fetches them', async () => {
      const port = (files.address() as AddressInfo).port;
      served.length = 0;
      for (const url of [`http://127.0.0.1:${port}/page.png`, `http://localhost.:${port}/page.png`]) {
        const e = err(
          await compose.call('POST', '/api/imageocr/process-url', { url }, { 'X-Service-Api-Key': KEY }),
          403,
          'FORBIDDEN',
        );
        expect(e.message, url).to.match(/private, loopback/);
      }
      expect(served).to.deep.equal([]);
    });

    it('the worker delivers no webhook to a loopback receiver: the job completes, the refusal is in its log', async () => {
      const hook = await startWebhookReceiver();
      try {
        const created = await compose.call(
          'POST',
          '/api/jobs/',
          transformerJob(SMALL_HTML, { webhook: { url: hook.url } }),
          { 'X-Service-Api-Key': KEY },
        );
        expect(created.status, JSON.stringify(created.body)).to.equal(200);
        const jobId = created.body.data.job_id;
        const job = await until(
          async () => {
            const j = (await compose.call('GET', `/api/jobs/${jobId}`, undefined, { 'X-Service-Api-Key': KEY })).body
              .data;
            return j.logs.some((l: { message: string }) => /forbidden target/.test(l.message)) ? j : undefined;
          },
          'the refused delivery in the job log',
          30_000,
          200,
        );
        expect(job.status).to.equal('completed');
        expect(hook.requests).to.have.length(0);
      } finally {
        await hook.close();
      }
    });
  });
});
