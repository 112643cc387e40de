import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { buildPdf, wrapText } from '../support/documents/pdf-factory';
import { postMultipart } from '../support/clients/pdf-http';
import { tempDir } from '../support/servers/engines';
import { SENTENCES, speak } from '../support/media/speech-samples';

// Documents and recordings by URL (issue #23 point 5): /api/pdf/process and /api/audio/process take a `url` instead of
// a file, and pdf and audio jobs a `url` parameter; the job downloads it through the same SSRF-guarded, size-limited
// download as image OCR and video (the test API listens on loopback, which is what lets it fetch from this test's
// static server). Exactly one of file and url.

describe('PDF and audio by URL', function () {
  this.timeout(180_000);
  let s: Stack;
  let server: http.Server;
  let base: string;
  const dir = tempDir('url-inputs-');
  const served: string[] = [];
  useStack((stack) => (s = stack));

  before(async function () {
    this.timeout(60_000);
    fs.writeFileSync(
      path.join(dir, 'doc.pdf'),
      buildPdf({
        pages: [{ kind: 'lines', size: 14, lines: wrapText('A document fetched by URL, page one of one.', 60) }],
      }),
    );
    fs.copyFileSync(await speak(SENTENCES.en, 'en', dir, 'speech'), path.join(dir, 'speech.wav'));
    server = http.createServer((req, res) => {
      served.push(req.url ?? '');
      const file = path.join(dir, path.basename(req.url ?? ''));
      if (!fs.existsSync(file)) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'Content-Type': file.endsWith('.pdf') ? 'application/pdf' : 'audio/wav' })
        .end(fs.readFileSync(file));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads a PDF at a URL through /api/pdf/process and as a pdf job', async () => {
    const r = await postMultipart(`${s.url}/api/pdf/process`, {
      url: `${base}/doc.pdf`,
      extraction_method: 'native',
      useCache: 'false',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.extracted_text).to.include('fetched by URL');
    const job = await s.call('POST', '/api/jobs/', {
      job_type: 'pdf',
      parameters: { url: `${base}/doc.pdf`, extraction_method: 'native' },
    });
    expect(job.status, JSON.stringify(job.body)).to.equal(200);
    const done = await s.waitJob(job.body.data.job_id);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(JSON.stringify(done.results)).to.include('fetched by URL');
    expect(served.filter((u) => u === '/doc.pdf').length).to.equal(2);
  });

  it('transcribes a recording at a URL through /api/audio/process', async () => {
    const r = await postMultipart(`${s.url}/api/audio/process`, {
      url: `${base}/speech.wav`,
      source_language: 'en',
      target_language: 'en',
      useCache: 'false',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(String(r.body.data.transcription?.text ?? JSON.stringify(r.body.data)).toLowerCase()).to.match(
      /ticket|coffee|train|station|weather|morning/,
    );
  });

  it('asks for exactly one of file and url, and a URL that does not answer fails the job with its error', async () => {
    const both = await postMultipart(
      `${s.url}/api/pdf/process`,
      { url: `${base}/doc.pdf` },
      { bytes: fs.readFileSync(path.join(dir, 'doc.pdf')), name: 'doc.pdf', type: 'application/pdf' },
    );
    expect(both.status).to.equal(400);
    expect(both.body.error.message).to.match(/exactly one of file and url/);
    const neither = await postMultipart(`${s.url}/api/audio/process`, { source_language: 'en' });
    expect(neither.status).to.equal(400);
    const missing = await postMultipart(`${s.url}/api/pdf/process`, { url: `${base}/nothing.pdf`, useCache: 'false' });
    expect(missing.status, JSON.stringify(missing.body)).to.be.within(400, 599);
    expect(missing.body.status).to.equal('error');
  });
});
