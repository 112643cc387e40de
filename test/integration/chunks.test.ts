import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { htmlToPdf, structuredDoc, type StructuredDoc } from '../support/documents/html-pdf';
import { okData as ok, postMultipart, postPdf } from '../support/clients/pdf-http';
import { chunkedRecording, CHUNKED_SENTENCES } from '../support/media/speech-samples';

// chunking=true (contract §14) on the real API, worker and Temporal dev server: a PDF printed by Chromium read by
// poppler into Markdown and cut on its blocks, its text cut on its pages, `POST /api/chunks`, and the 400s of
// options an operation does not offer.

const exact = new Tiktoken(cl100k);
const tokensOf = (t: string) => exact.encode(t, [], []).length;

describe('chunks on the real stack', function () {
  this.timeout(120_000);
  let s: Stack;
  useStack((stack) => (s = stack));
  let doc: StructuredDoc;
  let pdf: Buffer;

  before(async () => {
    doc = structuredDoc();
    pdf = await htmlToPdf(doc.html, { pageHeaders: true });
  });

  it("cuts a PDF's Markdown within the budget, under its headings, with the pages and boxes of its blocks", async () => {
    const data = ok(await postPdf(s, { output_format: 'markdown', chunking: 'true', chunk_max_tokens: '120' }, pdf));
    expect(data.chunking).to.deep.equal({ tokenizer: 'cl100k_base', max_tokens: 120, overlap_tokens: 0 });
    const chunks: any[] = data.chunks;
    expect(chunks.length).to.be.greaterThan(3);
    const md: string = data.markdown;
    for (const c of chunks) {
      expect(c.tokens, c.text).to.equal(tokensOf(c.text));
      expect(c.tokens).to.be.at.most(120);
      expect(c.pages.length, c.text).to.be.greaterThan(0);
      expect(c.boxes.length, c.text).to.be.greaterThan(0);
      for (const b of c.boxes) {
        expect(c.pages).to.include(b.page);
        expect(b.bbox[2]).to.be.greaterThan(b.bbox[0]);
        expect(b.bbox[3]).to.be.greaterThan(b.bbox[1]);
      }
      // Offsets into data.markdown: the text there is the chunk's (a table's repeated header aside).
      if (!c.text.includes('| ---')) expect(md.slice(c.char_start, c.char_end)).to.equal(c.text);
    }
    // Every heading of the document is the last of some chunk's path, in order.
    const lasts = chunks.map((c) => c.heading_path[c.heading_path.length - 1]);
    for (const h of doc.headings) expect(lasts, h.text).to.include(h.text);
    // The document runs over two pages, and its chunks say so.
    expect(new Set(chunks.flatMap((c) => c.pages)).size).to.be.at.least(2);
    // The same request again is a cache hit with the same chunks; another budget is not.
    const again = await postPdf(s, { output_format: 'markdown', chunking: 'true', chunk_max_tokens: '120' }, pdf);
    expect(again.headers.get('x-cache')).to.equal('hit');
    expect(ok(again).chunks).to.deep.equal(chunks);
    const other = ok(await postPdf(s, { output_format: 'markdown', chunking: 'true', chunk_max_tokens: '400' }, pdf));
    expect(other.chunks.length).to.be.lessThan(chunks.length);
    expect(other.chunking.max_tokens).to.equal(400);
  });

  it('cuts the text format on its pages, and a result without chunking has no chunks', async () => {
    const data = ok(await postPdf(s, { chunking: 'true', chunk_max_tokens: '200', chunk_overlap_tokens: '40' }, pdf));
    for (const c of data.chunks) {
      expect(c.tokens).to.be.at.most(200);
      expect(c.heading_path).to.deep.equal([]);
      expect(c.boxes).to.deep.equal([]);
      expect(data.extracted_text.slice(c.char_start, c.char_end)).to.equal(c.text);
    }
    expect(data.chunks[0].pages).to.deep.equal([1]);
    expect(data.chunks[data.chunks.length - 1].pages).to.include(data.metadata.text_contents.length);
    const plain = ok(await postPdf(s, {}, pdf));
    expect(plain).to.not.have.property('chunks');
    expect(plain).to.not.have.property('chunking');
  });

  it('POST /api/chunks cuts Markdown a client has, and plain text as paragraphs only', async () => {
    const text = `# Guide\n\n${'A sentence about rivers and their banks. '.repeat(60)}\n\n## Tables\n\n| a | b |\n|---|---|\n| 1 | 2 |\n`;
    const r = await s.call('POST', '/api/chunks', { text, chunk_max_tokens: 64 });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const chunks: any[] = r.body.data.chunks;
    for (const c of chunks) {
      expect(c.tokens).to.equal(tokensOf(c.text)).and.to.be.at.most(64);
      expect(text.slice(c.char_start, c.char_end)).to.equal(c.text);
    }
    expect(chunks[0].heading_path).to.deep.equal(['Guide']);
    expect(chunks[chunks.length - 1].heading_path).to.deep.equal(['Guide', 'Tables']);
    const plain = await s.call('POST', '/api/chunks', { text: '# not a heading\n\nsecond', format: 'text' });
    expect(plain.body.data.chunks.map((c: any) => c.heading_path)).to.deep.equal([[]]);
    const o200 = await s.call('POST', '/api/chunks', { text: 'hello world', chunk_tokenizer: 'o200k_base' });
    expect(o200.body.data.chunking.tokenizer).to.equal('o200k_base');
  });

  it('refuses, naming the field, a chunk option without chunking, a bad value, and an operation without chunks', async () => {
    const expect400 = (r: { status: number; body: any }, field: string) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(JSON.stringify(r.body.error.details.issues)).to.contain(field);
    };
    expect400(await postPdf(s, { chunk_max_tokens: '100' }, pdf), 'chunk_max_tokens');
    // The defaults the OpenAPI document states, sent without chunking (as generated clients send them), ask nothing.
    const defaults = await postPdf(
      s,
      { chunk_max_tokens: '512', chunk_overlap_tokens: '0', chunk_tokenizer: 'cl100k_base' },
      pdf,
    );
    expect(defaults.status, JSON.stringify(defaults.body)).to.equal(200);
    expect(defaults.body.data).to.not.have.property('chunks');
    expect400(
      await postPdf(s, { chunking: 'true', chunk_max_tokens: '100', chunk_overlap_tokens: '100' }, pdf),
      'chunk_overlap_tokens',
    );
    expect400(await postPdf(s, { chunking: 'true', chunk_tokenizer: 'gpt2' }, pdf), 'chunk_tokenizer');
    expect400(await postPdf(s, { chunking: 'true', chunk_max_tokens: '5' }, pdf), 'chunk_max_tokens');
    expect400(await s.call('POST', '/api/chunks', { text: 'x', chunk_max_tokens: 100000 }), 'chunk_max_tokens');
    // Operations that do not offer chunks (yet): a 400 naming the field, never silently ignored.
    expect400(
      await s.call('POST', '/api/transformer/html-to-markdown', { html: '<p>x</p>', chunking: true }),
      'chunking',
    );
    expect400(
      await s.call('POST', '/api/jobs/', {
        job_type: 'transformer',
        parameters: { operation: 'text', text: 'x', chunking: true },
      }),
      'chunking',
    );
    const form = await postMultipart(
      `${s.url}/api/video/frames`,
      { timestamps: '0', chunking: 'true' },
      {
        bytes: Buffer.from('x'),
        name: 'v.mp4',
        type: 'video/mp4',
      },
    );
    expect400(form, 'chunking');
  });

  describe('a recording', () => {
    let dir: string;
    let wav: Buffer;
    before(async function () {
      this.timeout(120_000);
      dir = mkdtempSync(path.join(os.tmpdir(), 'chunks-audio-'));
      wav = readFileSync((await chunkedRecording(dir)).file);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('cuts the transcript at sentence ends within the budget, with times and segments', async function () {
      this.timeout(300_000);
      const fields = { source_language: 'en', target_language: 'en', chunking: 'true', chunk_max_tokens: '24' };
      const r = await postMultipart(`${s.url}/api/audio/process`, fields, {
        bytes: wav,
        name: 'long.wav',
        type: 'audio/wav',
      });
      const data = ok(r);
      expect(data.chunking).to.deep.equal({ tokenizer: 'cl100k_base', max_tokens: 24, overlap_tokens: 0 });
      const chunks: any[] = data.chunks;
      // Five sentences of about 12 tokens, two at most in a chunk of 24.
      expect(chunks.length).to.be.within(3, CHUNKED_SENTENCES.length);
      for (const c of chunks) {
        expect(c.tokens).to.equal(tokensOf(c.text)).and.to.be.at.most(24);
        expect(c.text, c.text).to.match(/[.!?]$/);
        expect(c.end).to.be.greaterThan(c.start);
        for (const i of c.segments) {
          expect(data.segments[i].end).to.be.greaterThan(c.start - 0.01);
          expect(data.segments[i].start).to.be.lessThan(c.end + 0.01);
        }
      }
      for (let i = 1; i < chunks.length; i++) expect(chunks[i].start).to.be.at.least(chunks[i - 1].end);
      expect(chunks.map((c) => c.text).join(' ')).to.equal(data.segments.map((g: any) => g.text.trim()).join(' '));

      // Timed at the spoken words though none were asked for: the same file with word_timestamps (the same cached
      // transcription) shows each chunk starting at a word's start and ending at a word's end.
      expect(data.segments.every((g: any) => g.words === undefined)).to.equal(true);
      const timed = ok(
        await postMultipart(
          `${s.url}/api/audio/process`,
          { ...fields, word_timestamps: 'true' },
          { bytes: wav, name: 'long.wav', type: 'audio/wav' },
        ),
      );
      expect(timed.chunks).to.deep.equal(chunks);
      const words: any[] = timed.segments.flatMap((g: any) => g.words);
      expect(words.length).to.be.greaterThan(chunks.length);
      for (const c of chunks) {
        expect(words.some((w) => w.start === c.start)).to.equal(true, `chunk ${c.index} starts at a word`);
        expect(words.some((w) => w.end === c.end)).to.equal(true, `chunk ${c.index} ends at a word`);
      }
    });
  });
});
