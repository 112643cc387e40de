import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { llmEnv } from '../support/servers/llm-env';
import {
  fieldsIn,
  startLlmServer,
  type LlmReply,
  type LlmRequest,
  type LlmServer,
} from '../support/servers/llm-server';
import { startOcrServer, type OcrServer } from '../support/servers/ocr-server';
import { responseChecker } from '../support/clients/openapi-schemas';
import { ROOT } from '../support/servers/processes';
import {
  parseCurl,
  promisedFields,
  readmeStatements,
  shellWords,
  statements,
  type CurlExample,
} from '../support/clients/readme-examples';
import {
  at,
  bash,
  hasField,
  nonEmpty,
  operationOf,
  readAnswer,
  reportingStatus,
  type Answer,
} from '../support/clients/readme-run';
import { README_TEXTS, startReadmeSite, writeReadmeFiles, type ReadmeSite } from '../support/servers/readme-site';
import { tempDir } from '../support/servers/engines';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Every curl example of README.md and of every page in docs/, run as written with the real curl through bash against a
// stack this suite starts (the API and worker on the shared Temporal dev server, real tesseract, poppler, ffmpeg and the
// local Whisper model), so no example can silently stop working (issue #23 point 1, issue #34 point 5). The pages are
// parsed here, at load time: each curl statement of a ```sh block becomes a test, run in page order (README.md, then
// docs/*.md by name), each after its page's `KEY=…; H=…` prelude. What the
// examples leave to the reader is filled in, and only that: `localhost:8080` is this stack, `https://example.org/…` a
// loopback site (or the webhook receiver for hooks and callbacks), `/srv/docs/` a directory in INPUT_ROOTS, the files
// they upload are generated into the directory they run in, `…` is real text, JOB_ID and BATCH_ID come from earlier
// answers. The language model is the OpenAI-compatible test server, external OCR the Mistral-compatible one.
//
// A curl example that no entry of EXAMPLES matches fails, and so does an entry that matches no example: a new
// example cannot be skipped silently, and a changed one is looked at again.

interface Run {
  stack: Stack;
  hook: WebhookReceiver;
  llm: LlmServer;
  /** The job id of the latest answer that named one. */
  lastJobId?: string;
  batchId?: string;
  failedJobId?: string;
  /** The job an `Entry.job` example waited for, as it ended. */
  lastDone?: any;
  /** The job an `Entry.jobOf` example acted on. */
  ownJobId?: string;
}

interface Entry {
  /** What the example shows. */
  name: string;
  method: string;
  /** The URL path as the page writes it (placeholders kept). */
  path: string;
  /** Substrings of the statement that tell apart examples of the same method and path. */
  has?: string[];
  /** What the README leaves to the reader (`…`), as [written, filled in]. */
  fill?: [string, string][];
  /** The HTTP status the README promises (default 200). */
  status?: number;
  /** Dotted paths of the JSON answer that must be present and non-empty. */
  expect?: string[];
  /** JOB_ID is a failed job (the test makes one: the README's own jobs all succeed, as they should). */
  failedJob?: true;
  /**
   * JOB_ID is a job of its own the test makes for this example, in this state (a restart needs a failed job, a cancel
   * a running one, a delete a finished one that nothing after it reads): the example leaves the job of the earlier
   * answers as it was.
   */
  jobOf?: 'failed' | 'running' | 'completed';
  /** A download: the file curl wrote must begin with these bytes. */
  download?: string;
  /** Run again (1 s apart, up to 3 minutes) while the answer says so (a 202 while the job runs, a long-poll). */
  again?: (a: Answer) => boolean;
  /** The answer names a job: it must complete. */
  job?: true;
  /** Further checks of the answer (webhooks received, the text read). */
  check?: (a: Answer, run: Run, c: CurlExample) => unknown;
  /** Not run, only its shape checked: why it cannot run here. */
  shapeOnly?: string;
}

const TABLE_HTML =
  '<table><tr><th>Name</th><th>City</th></tr><tr><td>Ada</td><td>London</td></tr><tr><td>Grace</td><td>New ' +
  'York</td></tr></table>';
const MEETING =
  'Anna: Guten Morgen, wir besprechen heute den Zeitplan. Ben: Der Prototyp ist am Freitag fertig. ' +
  'Anna: Dann zeigen wir ihn am Montag dem Kunden. Ben: Ich schreibe bis Donnerstag die Dokumentation.';
const ARTICLE =
  'The city council approved a new cycling plan on Tuesday. It adds forty kilometres of protected lanes over three ' +
  'years, paid for by the regional transport fund. Shop owners worried about parking, but a pilot street showed ' +
  'more customers arriving by bike. Work starts in spring on the main road to the station.';

/**
 * The wire-protocol model's answers where its default does not fit: template fields named after themselves, every
 * session's topic Hardware (so the story examples, topic "Hardware", find sessions); blocks translated one for one.
 */
function readmeModel(req: LlmRequest): LlmReply | undefined {
  if (!req.json?.response_format) return undefined;
  const users = (req.json.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
  const user = String(users[users.length - 1]?.content ?? '');
  const fields = fieldsIn(user);
  // The grounded example: the stated values, and a tax number made up, as a small model answers.
  if (user.includes('Rechnung Nr. 2025-0417'))
    return {
      content: JSON.stringify({
        number: '2025-0417',
        date: '2025-04-22',
        total: '1.369,10 €',
        tax_number: '287/654/3210',
      }),
    };
  // A grounded PDF template: the first line of the text as the title, and authors the text does not name.
  const system = String(req.json.messages.find((m: { role: string }) => m.role === 'system')?.content ?? '');
  if (fields.includes('authors') && system.includes('copy names, numbers')) {
    const text = user.slice(user.indexOf('"""') + 3).trim();
    const title = text.split('\n')[0]!.replace(/^[#*\s]+|[*\s]+$/g, '');
    return {
      content: JSON.stringify({ ...Object.fromEntries(fields.map((f) => [f, ''])), title, authors: ['Jane Doe'] }),
    };
  }
  if (fields.length) {
    const value = (f: string) => (f === 'topic' ? 'Hardware' : f === 'tags' ? 'hardware, maps' : `${f} value`);
    return { content: JSON.stringify(Object.fromEntries(fields.map((f) => [f, value(f)]))) };
  }
  try {
    const { blocks } = JSON.parse(user) as { blocks: { type: string; content: string | string[] }[] };
    const en = (c: string | string[]): string | string[] =>
      Array.isArray(c) ? c.map((x) => `${x} (en)`) : `${c} (en)`;
    return { content: JSON.stringify({ blocks: blocks.map((b) => ({ ...b, content: en(b.content) })) }) };
  } catch {
    return undefined;
  }
}

/** The words of samples/audio.mp3 (and of samples/video.mp4's sound track): JFK's inaugural address, 1961. */
const SAMPLE_SPEECH =
  /my fellow Americans\W+ask not what your country can do for you\W+ask what you can do for your country/i;

const running = (a: Answer) => a.body?.data?.status !== 'completed' && a.body?.data?.status !== 'failed';
const still202 = (a: Answer) => a.http === 202;
/** The webhook receiver has a `completed` delivery for `jobId` (at `/hook` or `/cb`); answers its body. */
const completion = async (run: Run, jobId: string) => {
  const mine = (r: WebhookReceiver['requests'][number]) => JSON.stringify(r.json ?? '').includes(jobId);
  await run.hook.waitFor((rs) => rs.some((r) => mine(r) && r.json?.phase === 'completed'), 60_000);
  return run.hook.requests.find((r) => mine(r) && r.json?.phase === 'completed')!.json;
};

/**
 * Every curl example of the pages, in page order, by method, path and what tells it apart (an example written on
 * two pages, such as README.md's and the API page's, is one entry). Besides `expect`, each
 * answer must fill the fields the example's comment promises (`# data: duration, transcription, …`, read by
 * promisedFields). The examples whose answer names a job wait for it to complete (as a reader of the README would
 * before using it).
 */
const EXAMPLES: Entry[] = [
  {
    name: 'health with a workflow probe',
    method: 'GET',
    path: '/api/health',
    expect: ['checks.workflow.status'],
    check: (a) => expect([a.body.status, a.body.checks.workflow.status]).to.deep.equal(['ok', 'ok']),
  },
  { name: 'HTML to Markdown', method: 'POST', path: '/api/transformer/html-to-markdown', expect: ['data.markdown'] },
  {
    name: 'tables',
    method: 'POST',
    path: '/api/transformer/extract-tables',
    fill: [['<table>…</table>', TABLE_HTML]],
    expect: ['data.tables.0.rows'],
  },
  { name: 'translation', method: 'POST', path: '/api/transformer/text', expect: ['data.translated_text'] },
  { name: 'the shipped templates', method: 'GET', path: '/api/transformer/templates', expect: ['data.templates'] },
  {
    name: 'a shipped template',
    method: 'POST',
    path: '/api/transformer/template',
    has: ['"template":"Besprechung"'],
    fill: [['…meeting transcript…', MEETING]],
    expect: ['data.transformed_text', 'data.template_fields'],
  },
  {
    name: 'a grounded PDF template',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['-F grounding=true'],
    expect: ['data.template_fields', 'data.template_sources', 'data.unsupported_fields', 'data.markdown'],
    check: (a) => {
      const d = a.body.data;
      expect(d.unsupported_fields).to.deep.equal(['authors']);
      const title = d.template_sources.title;
      expect(title, JSON.stringify(d.template_sources)).to.include({ page: 1 });
      expect(title.bbox).to.have.length(4);
      expect(d.markdown.slice(title.start, title.end)).to.equal(title.text);
    },
  },
  {
    name: 'a grounded template',
    method: 'POST',
    path: '/api/transformer/template',
    has: ['"grounding":true'],
    expect: ['data.template_fields', 'data.template_sources', 'data.unsupported_fields'],
    check: (a) => {
      const d = a.body.data;
      expect(d.unsupported_fields).to.deep.equal(['tax_number']);
      expect(d.template_fields).to.include({ tax_number: '', date: '2025-04-22' });
      expect(d.template_sources.date).to.include({ text: '22. April 2025' });
      expect(d.template_sources.total.text).to.equal('1.369,10 €');
      expect(d.transformed_text).to.equal('Nr. 2025-0417, 2025-04-22: 1.369,10 € (Steuernummer )');
    },
  },
  {
    name: 'a template of its own',
    method: 'POST',
    path: '/api/transformer/template',
    has: ['template_content', '"text":"…"'],
    fill: [['"text":"…"', `"text":"${ARTICLE}"`]],
    expect: ['data.transformed_text', 'data.template_fields.title', 'data.template_fields.summary'],
    check: (a) => expect(a.body.data.transformed_text).to.not.include('{title|'),
  },
  {
    name: 'a summary',
    method: 'POST',
    path: '/api/transformer/summarize',
    fill: [['"text":"…"', `"text":"${ARTICLE}"`]],
    expect: ['data.summary'],
  },
  { name: 'block documents', method: 'POST', path: '/api/common/blocks', expect: ['data.processed_blocks'] },
  { name: 'the samples', method: 'GET', path: '/api/common/samples', expect: ['data.samples'] },
  { name: 'a sample downloaded', method: 'GET', path: '/api/common/samples/sample.pdf', download: '%PDF' },
  {
    name: 'PDF combined, a page range',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['extraction_method=combined'],
    expect: ['data.extracted_text'],
  },
  {
    name: 'PDF local OCR with page images',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['extraction_method=local_ocr'],
    expect: ['data.extracted_text', 'data.metadata.image_paths', 'data.images_archive_filename'],
    check: (a) => expect(a.body.data.extracted_text).to.match(/Haushalt/),
  },
  {
    name: 'PDF as Markdown beside its text',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['output_format=markdown localhost'],
    expect: ['data.extracted_text', 'data.markdown', 'data.metadata.text_contents'],
    check: (a) => {
      const page = a.body.data.metadata.text_contents[0];
      expect(page.markdown).to.be.a('string').and.not.equal('');
      expect(page.quality.score).to.be.within(0, 1);
      // The page's blocks, in reading order, with their boxes on the page; its Markdown is their text.
      const blocks = page.blocks as { type: string; text: string; bbox: number[]; order: number }[];
      expect(blocks.map((b) => b.order)).to.deep.equal(blocks.map((_, i) => i));
      for (const b of blocks) {
        expect(b.bbox[0]).to.be.below(b.bbox[2]);
        expect(b.bbox[1]).to.be.below(b.bbox[3]);
        if (b.type !== 'header' && b.type !== 'footer') expect(page.markdown).to.include(b.text);
      }
      expect(blocks.length).to.be.above(0);
    },
  },
  {
    name: 'PDF by URL',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['-F url='],
    expect: ['data.extracted_text'],
    check: (a) => expect(a.body.data.extracted_text).to.include(README_TEXTS.pdf[1]),
  },
  {
    name: 'PDF job of a server file, with a webhook',
    method: 'POST',
    path: '/api/pdf/job',
    expect: ['data.job_id'],
    job: true,
    check: async (a, run) => {
      expect(JSON.stringify(run.lastDone.results)).to.include(README_TEXTS.pdf[1]);
      await completion(run, a.body.data.job_id);
    },
  },
  {
    name: 'external OCR, waited for',
    method: 'POST',
    path: '/api/pdf/process-external-ocr',
    has: ['wait_ms=60000'],
    expect: ['data.extracted_text', 'data.external_ocr_raw.pages'],
    check: (a) => expect(a.body.data.extracted_text).to.include(README_TEXTS.pdf[0]),
  },
  {
    name: 'external OCR with a callback',
    method: 'POST',
    path: '/api/pdf/process-external-ocr',
    has: ['callback_url='],
    status: 202,
    expect: ['data.job_id'],
    job: true,
    check: async (_a, run) => {
      await run.hook.waitFor((rs) => rs.some((r) => r.path.startsWith('/cb')), 60_000);
    },
  },
  {
    name: 'the pages archive',
    method: 'GET',
    path: '/api/pdf/jobs/JOB_ID/download-pages-archive',
    download: 'PK',
    again: still202,
  },
  {
    name: 'document: a Word file as Markdown',
    method: 'POST',
    path: '/api/document/process',
    has: ['file=@samples/sample.docx -F output_format=markdown'],
    expect: ['data.extracted_text', 'data.markdown', 'data.metadata.text_contents'],
    check: (a) => {
      expect(a.body.data.metadata.format).to.equal('docx');
      expect(a.body.data.markdown)
        .to.include('# Open maps for everyone')
        .and.match(/^\| Berlin \| 310 \|$/m);
      expect(a.body.data.markdown).to.match(/^1\. Download the region$/m);
    },
  },
  {
    name: 'document: rendered by LibreOffice, read by OCR',
    method: 'POST',
    path: '/api/document/process',
    has: ['extraction_method=render'],
    expect: ['data.extracted_text', 'data.metadata.text_contents'],
    check: (a) => {
      expect(a.body.data.metadata.format).to.equal('docx');
      expect(a.body.data.metadata.text_contents[0].method).to.equal('local_ocr');
      expect(a.body.data.extracted_text).to.match(/Open maps for everyone/);
    },
  },
  {
    name: 'document: one sheet of a spreadsheet',
    method: 'POST',
    path: '/api/document/process',
    has: ['prices.xlsx'],
    expect: ['data.extracted_text'],
    check: (a) => {
      expect(a.body.data.metadata.text_contents.map((c: { name: string }) => c.name)).to.deep.equal(['Stock']);
      expect(a.body.data.metadata.page_count).to.equal(2);
    },
  },
  {
    name: 'document: an e-mail with its attachments',
    method: 'POST',
    path: '/api/document/process',
    has: ['mail.eml'],
    expect: ['data.markdown'],
    check: (a) => {
      const parts = a.body.data.metadata.text_contents;
      expect(parts.map((c: { part: string }) => c.part)).to.deep.equal(['message', 'attachment', 'attachment']);
      expect(parts[1].text).to.include(README_TEXTS.pdf[0]);
      expect(a.body.data.markdown).to.include('ada@example.org').and.include('| Berlin | 310 |');
    },
  },
  {
    name: 'document by URL',
    method: 'POST',
    path: '/api/document/process',
    has: ['-F url='],
    expect: ['data.extracted_text'],
    check: (a) => expect(a.body.data.extracted_text).to.include('Vector tiles served from a single laptop'),
  },
  {
    name: 'document job of a server file, with a webhook',
    method: 'POST',
    path: '/api/jobs/',
    has: ['"job_type":"document"'],
    expect: ['data.job_id'],
    job: true,
    check: async (_a, run) => {
      expect(run.lastDone.results.markdown).to.include('# Open maps for everyone');
    },
  },
  {
    name: 'image OCR of an upload',
    method: 'POST',
    path: '/api/imageocr/process',
    has: ['ocr_language=de'],
    expect: ['data.extracted_text'],
    check: (a) => expect(a.body.data.extracted_text).to.match(/quarterly report/),
  },
  {
    name: 'image OCR as Markdown with its blocks',
    method: 'POST',
    path: '/api/imageocr/process',
    has: ['output_format=markdown'],
    expect: ['data.markdown', 'data.blocks'],
    check: (a) => {
      const { markdown, blocks, metadata } = a.body.data;
      expect(markdown).to.match(/quarterly report/i);
      expect(markdown.trim()).to.equal(blocks.map((b: { text: string }) => b.text).join('\n\n'));
      for (const b of blocks) expect(b.bbox[2]).to.be.within(b.bbox[0], metadata.width);
    },
  },
  {
    name: 'image OCR by URL',
    method: 'POST',
    path: '/api/imageocr/process-url',
    expect: ['data.extracted_text'],
    check: (a) => expect(a.body.data.extracted_text).to.match(/quarterly report/),
  },
  {
    name: 'audio: transcript, template, translation',
    method: 'POST',
    path: '/api/audio/process',
    has: ['-F template=Besprechung'],
    check: (a) => expect(a.body.data.original_text.toLowerCase()).to.match(/park|children|bridge|weather/),
  },
  {
    name: 'audio: word timings, subtitles, prompt',
    method: 'POST',
    path: '/api/audio/process',
    has: ['-F word_timestamps=true'],
    check: (a) => {
      const d = a.body.data;
      expect(d.segments[0].words[0]).to.have.all.keys('word', 'start', 'end', 'probability');
      expect(d.subtitles).to.match(/^1\n00:00:0\d,\d{3} --> /);
      expect(d.subtitles.toLowerCase()).to.match(/park|children|bridge|weather/);
    },
  },
  {
    name: 'audio: speaker labels',
    method: 'POST',
    path: '/api/audio/process',
    has: ['-F diarize=true'],
    check: (a) => {
      const segments = a.body.data.segments as { speaker: string; text: string }[];
      expect(segments.length).to.be.at.least(1);
      // The README's recording has one voice: one label.
      expect([...new Set(segments.map((s) => s.speaker))]).to.deep.equal(['SPEAKER_1']);
    },
  },
  {
    name: 'audio: language detection',
    method: 'POST',
    path: '/api/audio/detect-language',
    check: (a) => {
      expect(a.body.data.language).to.equal('en');
      expect(a.body.data.language_probability).to.be.above(0.5);
    },
  },
  {
    name: 'audio: OpenAI-compatible transcription',
    method: 'POST',
    path: '/v1/audio/transcriptions',
    has: ['file=@talk.mp3'],
    check: (a) => expect(String(a.body)).to.match(/^WEBVTT\n\n00:00:0\d\.\d{3} --> [\s\S]*(park|children|bridge)/i),
  },
  {
    name: 'the sample recording transcribed',
    method: 'POST',
    path: '/api/audio/process',
    has: ['-F file=@samples/audio.mp3 -F source_language=auto'],
    check: (a) => {
      const d = a.body.data;
      expect(d.detected_language).to.equal('en');
      expect(d.duration).to.be.within(10.5, 11.5);
      expect(d.original_text).to.match(SAMPLE_SPEECH);
      // chunking=true: the transcript in chunks within the default budget, with their times.
      expect(d.chunking).to.deep.equal({ tokenizer: 'cl100k_base', max_tokens: 512, overlap_tokens: 0 });
      expect(d.chunks.map((c: { text: string }) => c.text).join(' ')).to.match(SAMPLE_SPEECH);
      expect(d.chunks[0].end).to.be.greaterThan(d.chunks[0].start);
    },
  },
  {
    name: 'the sample recording as subtitles, OpenAI-compatible',
    method: 'POST',
    path: '/v1/audio/transcriptions',
    has: ['file=@samples/audio.mp3'],
    check: (a) => {
      expect(String(a.body)).to.match(/^1\n00:00:0\d,\d{3} --> 00:00:\d\d,\d{3}\n/);
      const cues = String(a.body)
        .split('\n')
        .filter((l) => l.trim() !== '' && !/^\d+$/.test(l) && !l.includes(' --> '));
      expect(cues.join(' ')).to.match(SAMPLE_SPEECH);
    },
  },
  {
    name: 'a recording in chunks',
    method: 'POST',
    path: '/api/audio/process',
    has: ['-F chunking=true -F chunk_max_tokens=64'],
    check: (a) => {
      const d = a.body.data;
      for (const c of d.chunks) expect(c.tokens).to.be.within(1, 64);
      expect(d.chunks[0].segments).to.include(0);
    },
  },
  {
    name: 'a PDF in chunks',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['-F chunking=true -F chunk_max_tokens=256'],
    check: (a) => {
      const d = a.body.data;
      expect(d.chunking.max_tokens).to.equal(256);
      for (const c of d.chunks) {
        expect(c.tokens).to.be.within(1, 256);
        expect(c.pages.length).to.be.greaterThan(0);
      }
      expect(d.chunks.some((c: { heading_path: string[] }) => c.heading_path.length > 0)).to.equal(true);
    },
  },
  {
    name: 'chunks of text a client has',
    method: 'POST',
    path: '/api/chunks',
    check: (a) => {
      const chunks = a.body.data.chunks as { heading_path: string[]; tokens: number }[];
      expect(chunks.map((c) => c.heading_path)).to.deep.equal([['Guide'], ['Guide', 'Use']]);
      expect(a.body.data.chunking.overlap_tokens).to.equal(8);
    },
  },
  {
    name: 'the sample video transcribed',
    method: 'POST',
    path: '/api/video/process',
    has: ['-F file=@samples/video.mp4'],
    check: (a) => {
      expect(a.body.data.duration).to.be.within(10.5, 11.5);
      expect(a.body.data.transcription).to.match(SAMPLE_SPEECH);
    },
  },
  {
    name: 'video upload',
    method: 'POST',
    path: '/api/video/process',
    has: ['-F file=@talk.mp4'],
    check: (a) => expect(a.body.data.transcription.toLowerCase()).to.match(/park|children|bridge|weather/),
  },
  {
    name: 'video by URL',
    method: 'POST',
    path: '/api/video/process',
    has: ['"url":"https://example.org/talk.mp4"'],
    expect: ['data.duration', 'data.transcription', 'data.metadata.resolution'],
  },
  {
    name: 'hosted video',
    method: 'POST',
    path: '/api/video/hosted',
    shapeOnly:
      'a video platform page: yt-dlp would fetch it from youtube.com, and a test has no network (nor a stand-in ' +
      'that speaks a platform to yt-dlp)',
  },
  { name: 'video frames', method: 'POST', path: '/api/video/frames', expect: ['data.frames.0.path'] },
  {
    name: 'a frame downloaded',
    method: 'GET',
    path: '/api/event-job/files/jobs/JOB_ID/out/frames/frame-00001.jpg',
    download: '\xff\xd8',
  },
  {
    name: 'a session, waited for',
    method: 'POST',
    path: '/api/session/process',
    check: (a) => {
      const out = a.body.data.output;
      expect(out.markdown_content).to.include('Ada Lovelace');
      expect(out.video_transcript.toLowerCase()).to.match(/park|children|bridge|weather/);
      expect(out.attachments_text).to.include(README_TEXTS.pdf[1]);
    },
  },
  {
    name: 'a session, answered at once, with a webhook',
    method: 'POST',
    path: '/api/session/process-async',
    job: true,
    check: async (a, run, c) => {
      // "webhook data: markdown_file, attachments, output": the completion webhook's data holds them (attachments
      // an empty list: the example names none).
      const hook = await completion(run, a.body.data.job_id);
      const promised = promisedFields(c.comment.split(';')[1].replace(/^\s*webhook data:/, 'data:'));
      expect(promised).to.include.members(['data.markdown_file', 'data.output']);
      for (const f of promised) expect(at(hook, f), `webhook ${f}: ${JSON.stringify(hook)}`).to.not.equal(undefined);
      expect(nonEmpty(hook.data.markdown_file) && nonEmpty(hook.data.output)).to.equal(true);
    },
  },
  { name: 'the cached sessions', method: 'GET', path: '/api/session/cached' },
  { name: 'a legacy event job', method: 'POST', path: '/api/event-job/jobs', expect: ['data.job_id'], job: true },
  { name: 'the tracks', method: 'GET', path: '/api/tracks/available' },
  { name: 'a track summary', method: 'POST', path: '/api/tracks/Open Hardware/summary' },
  { name: 'every session of a track summarised', method: 'POST', path: '/api/tracks/Open Hardware/summarize_all' },
  { name: 'an event summary', method: 'POST', path: '/api/events/FOSDEM 2025/summary' },
  { name: 'the topics', method: 'GET', path: '/api/story/topics' },
  { name: 'the target groups', method: 'GET', path: '/api/story/target-groups' },
  { name: 'a story', method: 'POST', path: '/api/story/generate' },
  {
    name: 'a job with a webhook and an idempotency key',
    method: 'POST',
    path: '/api/jobs/',
    has: ['my-id-7'],
    expect: ['data.job_id'],
    job: true,
    check: async (a, run) => {
      const hook = await completion(run, a.body.data.job_id);
      expect(hook.job.id).to.equal('my-id-7');
    },
  },
  {
    name: 'a job of its own',
    method: 'POST',
    path: '/api/jobs/',
    has: ['Hello <b>jobs</b>'],
    job: true,
    check: (_a, run) => expect(run.lastDone.results.markdown).to.equal('Hello **jobs**'),
  },
  {
    name: 'a job long-polled to its results',
    method: 'GET',
    path: '/api/jobs/JOB_ID',
    has: ['wait=30'],
    expect: ['data.status', 'data.results'],
    again: running,
  },
  {
    name: 'a job’s events',
    method: 'GET',
    path: '/api/jobs/JOB_ID/events',
    check: (a) => {
      expect(a.text).to.match(/^event: completed$/m);
      expect(a.text).to.not.match(/^event: (failed|error)$/m);
    },
  },
  {
    name: 'a job’s archive',
    method: 'GET',
    path: '/api/jobs/JOB_ID/download-archive',
    download: 'PK',
    again: still202,
  },
  {
    name: 'a batch',
    method: 'POST',
    path: '/api/jobs/batch',
    fill: [['<table>…</table>', TABLE_HTML]],
    expect: ['data.batch_id'],
  },
  {
    name: 'a batch paused or resumed',
    method: 'POST',
    path: '/api/event-job/batches/BATCH_ID/toggle-active',
    has: ['-X POST'],
    check: (a) => expect(a.body.data.active).to.equal(false),
  },
  {
    name: 'a batch set active',
    method: 'POST',
    path: '/api/event-job/batches/BATCH_ID/toggle-active',
    has: ['{"active":true}'],
    check: (a) => expect(a.body.data.active).to.equal(true),
  },
  {
    name: 'a batch failed',
    method: 'POST',
    path: '/api/event-job/batches/fail-all',
    expect: ['data.batch_id', 'data.failed_count'],
  },
  { name: 'a batch read', method: 'GET', path: '/api/jobs/batch/BATCH_ID', expect: ['data.batch_id', 'data.jobs'] },
  {
    name: 'a failed job restarted',
    method: 'POST',
    path: '/api/event-job/JOB_ID/restart',
    failedJob: true,
    check: (a, run) => expect(a.body.data).to.include({ job_id: run.failedJobId, status: 'pending' }),
  },
  {
    name: 'a page of the newest jobs',
    method: 'GET',
    path: '/api/jobs',
    has: ['limit=2'],
    check: (a) => expect(a.body.data.jobs).to.have.length(2),
  },
  {
    name: 'the jobs filtered',
    method: 'GET',
    path: '/api/jobs',
    has: ['status=completed&job_type=transformer'],
    check: (a) =>
      expect(a.body.data.jobs.every((j: any) => j.status === 'completed' && j.job_type === 'transformer')).to.equal(
        true,
      ),
  },
  { name: 'the batches', method: 'GET', path: '/api/jobs/batches' },
  {
    name: 'a failed job restarted (preferred path)',
    method: 'POST',
    path: '/api/jobs/JOB_ID/restart',
    jobOf: 'failed',
    check: (a, run) => expect(a.body.data).to.include({ job_id: run.ownJobId, status: 'pending' }),
  },
  {
    name: 'a running job cancelled',
    method: 'POST',
    path: '/api/jobs/JOB_ID/cancel',
    jobOf: 'running',
    check: async (a, run) => {
      expect(a.body.data).to.include({ job_id: run.ownJobId, status: 'failed' });
      const job = await fetch(`${run.stack.url}/api/jobs/${run.ownJobId}`, {
        headers: { 'X-Service-Api-Key': String(run.stack.api.config.SERVICE_API_KEY) },
      });
      expect(((await job.json()) as any).data.error.code).to.equal('CANCELLED');
    },
  },
  {
    name: 'a finished job deleted',
    method: 'DELETE',
    path: '/api/jobs/JOB_ID',
    jobOf: 'completed',
    check: async (a, run) => {
      expect(a.body.data).to.include({ job_id: run.ownJobId, deleted: true });
      const job = await fetch(`${run.stack.url}/api/jobs/${run.ownJobId}`, {
        headers: { 'X-Service-Api-Key': String(run.stack.api.config.SERVICE_API_KEY) },
      });
      expect(job.status).to.equal(404);
    },
  },
  {
    name: 'any work answered at once',
    method: 'POST',
    path: '/api/pdf/process',
    has: ['Prefer: respond-async'],
    status: 202,
    expect: ['data.job_id'],
  },
];

/** The pages whose examples run: README.md, then every page of docs/ by name. */
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
/** An example and the page it is on (`docs/api-pdf.md`), with that page's `KEY=`/`H=` prelude. */
type PageExample = CurlExample & { page: string; prelude: string[] };
/** The pages' statements, read once at load time. */
const pages = PAGES.map((page) => {
  const sts = readmeStatements(path.join(ROOT, page));
  const prelude = sts.filter((s) => /^(KEY|H)=/.test(s.text)).map((s) => s.text);
  return { page, sts, prelude };
});
const curls: PageExample[] = pages.flatMap(({ page, sts, prelude }) =>
  sts.filter((s) => /^curl\s/.test(s.text)).map((s) => ({ ...parseCurl(s), page, prelude })),
);
/** Statements that run curl other than at their start (a pipe, `$(…)`, `&&`): the suite would not see them. */
const hidden = pages.flatMap(({ page, sts }) =>
  sts.filter((s) => !/^curl\s/.test(s.text) && /(^|[\s;&|($`])curl\s/.test(s.text)).map((s) => ({ ...s, page })),
);
/** Where an example is, for messages and test names: `docs/api-pdf.md:12`. */
const where = (c: { page: string; line: number }) => `${c.page}:${c.line}`;

const matches = (e: Entry, c: CurlExample) =>
  e.method === c.method && e.path === c.path && (e.has ?? []).every((h) => c.text.includes(h));
const entryOf = (c: PageExample): Entry => {
  const found = EXAMPLES.filter((e) => matches(e, c));
  if (found.length !== 1) {
    throw new Error(
      `${where(c)}: ${found.length ? `${found.length} table entries match` : 'no table entry matches'} ` +
        `${c.method} ${c.path}: add one to EXAMPLES in test/e2e/readme-examples.test.ts (its substitutions and ` +
        `the fields its answer must fill)\n${c.text}`,
    );
  }
  return found[0];
};

describe('README examples: every curl of README.md and docs/*.md against a started stack', function () {
  this.timeout(600_000);
  const dir = tempDir('readme-examples-');
  const inputRoot = tempDir('readme-inputs-');
  let run: Run;
  let llm: LlmServer;
  let ocr: OcrServer;
  let hook: WebhookReceiver;
  let site: ReadmeSite;
  let stack: Stack;
  let key = '';
  let openapi: Record<string, any>;
  let documented: ReturnType<typeof responseChecker>;

  /** A JSON call to the stack with the pages' key. */
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(stack.url + p, {
      method,
      headers: { 'X-Service-Api-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const jobEnd = async (jobId: string, timeoutMs = 300_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await api('GET', `/api/jobs/${jobId}?wait=5`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      if (['completed', 'failed'].includes(r.body.data.status)) return r.body.data;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${r.body.data.status}`);
    }
  };

  before(async function () {
    this.timeout(300_000);
    // Every page with examples sets the key before them, as a reader starting on that page needs; one stack serves all,
    // so it is one key.
    const keys = await Promise.all(
      pages
        .filter((p) => curls.some((c) => c.page === p.page))
        .map(async (p) => [p.page, (await bash(`${p.prelude.join('\n')}\nprintf %s "$KEY"`, dir, 10_000)).stdout]),
    );
    for (const [page, k] of keys) expect(k, `${page} sets KEY before its examples`).to.not.equal('');
    expect(new Set(keys.map(([, k]) => k)).size, `one KEY on every page: ${JSON.stringify(keys)}`).to.equal(1);
    key = keys[0][1];
    const files = await writeReadmeFiles(dir);
    fs.writeFileSync(path.join(inputRoot, 'report.pdf'), files.pdf);
    fs.writeFileSync(path.join(inputRoot, 'report.docx'), files.docx);
    site = await startReadmeSite(files);
    hook = await startWebhookReceiver();
    ocr = await startOcrServer();
    llm = await startLlmServer({ apiKey: 'sk-readme-examples' });
    llm.respond(readmeModel);
    stack = await startStack({
      ...llmEnv(llm, { LLM_API_KEY: 'sk-readme-examples', LLM_TIMEOUT_MS: '60000' }),
      SERVICE_API_KEY: key,
      ALLOW_PRIVATE_URLS: 'true',
      ALLOW_HTTP_CALLBACKS: 'true',
      INPUT_ROOTS: inputRoot,
      EXTERNAL_OCR_URL: ocr.url,
      WEBHOOK_RETRY_SCALE: '0.01',
    });
    run = { stack, hook, llm };
    openapi = (await api('GET', '/api/openapi.json')).body;
    documented = responseChecker(openapi);
    // The track, event and story examples read sessions processed before (FOSDEM 2025, track Open Hardware): one is
    // processed here, as any session is.
    const seeded = await api('POST', '/api/session/process', {
      event: 'FOSDEM 2025',
      session: 'Open hardware for everyone',
      url: `${site.base}/schedule/open-hardware/`,
      filename: 'open-hardware',
      track: 'Open Hardware',
      source_language: 'en',
      target_language: 'en',
    });
    expect(seeded.status, JSON.stringify(seeded.body)).to.equal(200);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), hook?.close(), ocr?.close(), llm?.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(inputRoot, { recursive: true, force: true });
  });

  it('reads the examples: every curl statement starts its statement, and every table entry names an example', () => {
    expect(PAGES.slice(0, 1), 'README.md first, then docs/').to.deep.equal(['README.md']);
    expect(curls.length, 'curl examples on the pages').to.be.greaterThan(40);
    expect(curls.filter((c) => c.page === 'README.md').length, 'curl examples in README.md').to.be.within(8, 14);
    expect(hidden.map((s) => `${where(s)}: ${s.text}`)).to.deep.equal([]);
    const unused = EXAMPLES.filter((e) => !curls.some((c) => matches(e, c)));
    expect(
      unused.map((e) => `${e.method} ${e.path} (${e.name})`),
      'table entries no example matches',
    ).to.deep.equal([]);
    const shapeOnly = EXAMPLES.filter((e) => e.shapeOnly).map((e) => e.name);
    expect(shapeOnly, 'examples checked for shape only (keep this list short)').to.deep.equal(['hosted video']);
  });

  it('reads shell as bash does: continuations, quoted bodies over several lines, `;`, comments', () => {
    const sts = statements(
      [
        'A=1; B="x y"   # two',
        'curl -s localhost:8080/api/a \\',
        '  -F f=@a.pdf   # data: x, y {p, q}, z [{m}]',
        "curl -s localhost:8080/api/b -d '{",
        '  "k": "v # not a comment"}\'   # data.list: [{n, c, ...}] newest first',
      ].join('\n'),
      10,
    );
    expect(sts.map((st) => [st.line, st.text.split('\n').length, st.comment])).to.deep.equal([
      [10, 1, ''],
      [10, 1, 'two'],
      [11, 2, 'data: x, y {p, q}, z [{m}]'],
      [13, 2, 'data.list: [{n, c, ...}] newest first'],
    ]);
    expect(parseCurl(sts[3])).to.include({ method: 'POST', path: '/api/b' });
    expect(shellWords(sts[3].text)[4]).to.equal('{\n  "k": "v # not a comment"}');
    expect(promisedFields(sts[2].comment)).to.deep.equal(['data.x', 'data.y.p', 'data.y.q', 'data.z', 'data.z.0.m']);
    expect(promisedFields(sts[3].comment)).to.deep.equal(['data.list', 'data.list.0.n', 'data.list.0.c']);
    expect(promisedFields('flips the flag')).to.deep.equal([]);
  });

  for (const c of curls) {
    it(`${where(c)}: ${c.method} ${c.path}${c.query ? `?${c.query}` : ''}`, async function () {
      const entry = entryOf(c);
      const op = operationOf(openapi, c.method, c.path);
      expect(op, `${c.method} ${c.path} is in /api/openapi.json`).to.not.equal(undefined);
      const fields = [...new Set([...(entry.expect ?? []), ...promisedFields(c.comment)])];
      expect(fields.length || entry.download || entry.check, `the table checks something of line ${c.line}`).to.be.ok;
      if (entry.shapeOnly) {
        // Shape only: bash parses it, the endpoint takes each of its form fields and documents the promised ones.
        const parsed = await bash(`set -n\n${c.prelude.join('\n')}\n${c.text}`, dir, 10_000);
        expect(parsed.code, parsed.stderr).to.equal(0);
        const form = op!.op.requestBody?.content?.['multipart/form-data']?.schema;
        for (const w of c.words.filter((_, i) => c.words[i - 1] === '-F')) {
          expect(hasField(openapi, form, [w.split('=')[0]]), `form field ${w}`).to.equal(true);
        }
        const answer = op!.op.responses?.['200']?.content?.['application/json']?.schema;
        for (const f of fields) expect(hasField(openapi, answer, f.split('.')), `${f} documented`).to.equal(true);
        return;
      }
      const script = await commandFor(c, entry);
      const deadline = Date.now() + 180_000;
      let a: Answer;
      for (;;) {
        a = await execute(script, c);
        if (!entry.again?.(a) || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      const answered = `${where(c)} answered ${a.http}: ${a.text.slice(0, 1500)}`;
      expect(a.http, answered).to.equal(entry.status ?? 200);
      if (entry.download) {
        const bytes = fs.readFileSync(path.join(dir, a.file));
        expect(bytes.length, answered).to.be.greaterThan(0);
        expect(bytes.subarray(0, entry.download.length).toString('latin1'), answered).to.equal(entry.download);
      } else if (typeof a.body === 'object' && a.body !== null) {
        if (op!.route !== '/api/health') expect(a.body.status, answered).to.equal('success');
        const undocumented = documented(c.method, op!.route, a.http, a.body);
        expect(undocumented, `${answered}\nagainst /api/openapi.json`).to.deep.equal([]);
        for (const f of fields) expect(nonEmpty(at(a.body, f)), `${f} empty: ${answered}`).to.equal(true);
      } else if (!entry.check) expect.fail(`not JSON: ${answered}`);
      const jobId: unknown = a.body?.data?.job_id ?? /jobs\/(job-[0-9a-f-]+)\//.exec(a.text)?.[1];
      if (typeof jobId === 'string' && !entry.jobOf) run.lastJobId = jobId;
      if (typeof a.body?.data?.batch_id === 'string') run.batchId = a.body.data.batch_id;
      if (entry.job) {
        run.lastDone = await jobEnd(a.body.data.job_id);
        expect(run.lastDone.status, JSON.stringify(run.lastDone.error)).to.equal('completed');
      }
      await entry.check?.(a, run, c);
    });
  }

  /** The statement as bash runs it: what the page leaves to the reader filled in, curl told to report its status. */
  async function commandFor(c: PageExample, entry: Entry): Promise<string> {
    let text = c.text;
    for (const [from, to] of entry.fill ?? []) {
      expect(text, `the example still writes ${from}`).to.include(from);
      text = text.replaceAll(from, to);
    }
    expect(text, 'every … of the example is filled in').to.not.include('…');
    if (text.includes('JOB_ID')) {
      if (entry.failedJob) run.failedJobId ??= await failedJob();
      if (entry.jobOf) run.ownJobId = await jobOf(entry.jobOf);
      const jobId = entry.jobOf ? run.ownJobId : entry.failedJob ? run.failedJobId : run.lastJobId;
      expect(jobId, 'an earlier answer named a job').to.be.a('string');
      text = text.replaceAll('JOB_ID', jobId!);
    }
    if (text.includes('BATCH_ID')) {
      expect(run.batchId, 'an earlier answer named a batch').to.be.a('string');
      text = text.replaceAll('BATCH_ID', run.batchId!);
    }
    text = text
      .replaceAll('localhost:8080', stack.url.replace(/^http:\/\//, ''))
      .replaceAll('https://example.org/hook', `${hook.url.replace(/\/hook$/, '')}/hook`)
      .replaceAll('https://example.org/cb', `${hook.url.replace(/\/hook$/, '')}/cb`)
      .replaceAll('https://example.org/', `${site.base}/`)
      .replaceAll('/srv/docs/', `${inputRoot}/`);
    expect(text).to.not.match(/example\.org|localhost:8080|[A-Z]+_ID\b/);
    const words = shellWords(text);
    expect(words[0]).to.equal('curl');
    return `${c.prelude.join('\n')}\n${reportingStatus(text)}`;
  }

  /** Runs the script in the examples' directory; answers what curl reported. */
  async function execute(script: string, c: PageExample): Promise<Answer> {
    const r = await bash(script, dir, 900_000);
    expect(r.code, `curl of ${where(c)} exited ${r.code}: ${r.stderr}`).to.equal(0);
    const answer = readAnswer(r.stdout);
    expect(answer, `curl of ${where(c)} reported no status: ${r.stdout.slice(-500)}`).to.not.equal(null);
    return answer!;
  }

  /**
   * A job of its own for an example: failed (its file is not there), running (the model never answers its call: the
   * client gives up after LLM_TIMEOUT_MS, long after the cancel ended the job), or completed.
   */
  async function jobOf(state: 'failed' | 'running' | 'completed'): Promise<string> {
    if (state === 'failed') return failedJob();
    const before = llm.chatRequests().length;
    if (state === 'running')
      llm.respond((req) => (req.body.includes('thinks about') ? new Promise<undefined>(() => {}) : readmeModel(req)));
    const r = await api(
      'POST',
      '/api/jobs/',
      state === 'running'
        ? {
            job_type: 'transformer',
            parameters: { operation: 'summarize', text: 'A text the model thinks about.', use_cache: false },
          }
        : { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<p>Deleted soon.</p>' } },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const jobId: string = r.body.data.job_id;
    if (state === 'completed') {
      expect((await jobEnd(jobId)).status).to.equal('completed');
      return jobId;
    }
    for (const deadline = Date.now() + 60_000; ;) {
      if (
        llm
          .chatRequests()
          .slice(before)
          .some((q) => q.body.includes('thinks about'))
      )
        return jobId;
      if (Date.now() > deadline) throw new Error(`job ${jobId}: its model call never started`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A job that failed (its file is not there), for the restart example. */
  async function failedJob(): Promise<string> {
    const r = await api('POST', '/api/jobs/', {
      job_type: 'pdf',
      parameters: { filename: path.join(inputRoot, 'missing.pdf'), extraction_method: 'native' },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const done = await jobEnd(r.body.data.job_id);
    expect(done.status).to.equal('failed');
    return r.body.data.job_id;
  }
});
