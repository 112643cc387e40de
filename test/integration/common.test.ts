import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { download, rawRequest } from '../support/jobs';
import { message, useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { ROOT } from '../support/servers/processes';

// The common endpoints (spec §4.4: blocks, samples) and every model-backed endpoint without a model configured,
// on the real API and worker, the shared Temporal dev server and the OpenAI-compatible test server, over loopback.

const SAMPLES = path.join(ROOT, 'samples');
const KOELN = 'Grüße aus Köln.pdf';
const BLOCKS = [
  { type: 'heading', content: 'Neuigkeiten' },
  { type: 'paragraph', content: 'Der Dom ist wieder offen.' },
  { type: 'list', content: ['Führungen', 'Konzerte'] },
  { type: 'quote', content: 'Kölle Alaaf' },
];

function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).to.equal(status);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal(code);
}

describe('common endpoints with a language model', function () {
  this.timeout(30_000);
  let s: Stack;
  let llm: LlmServer;

  useLlmStack((stack, server) => {
    s = stack;
    llm = server;
  });

  it('translates the blocks in one JSON-mode call and composes the newsfeed entry from the translation', async () => {
    const en = (c: unknown) => (Array.isArray(c) ? c.map((x) => `EN ${x}`) : `EN ${c}`);
    llm.respond((req) => {
      const { blocks } = JSON.parse(message(req, 'user')) as { blocks: { type: string; content: unknown }[] };
      return { content: JSON.stringify({ blocks: blocks.map((b) => ({ type: b.type, content: en(b.content) })) }) };
    });
    const r = await s.call('POST', '/api/common/blocks', {
      blocks: BLOCKS,
      source_language: 'de',
      target_language: 'en',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.processed_blocks).to.deep.equal(
      BLOCKS.map((b) => ({ type: b.type, content: en(b.content), original_content: b.content })),
    );
    expect(r.body.data.newsfeed_entry).to.equal(
      '## EN Neuigkeiten\n\nEN Der Dom ist wieder offen.\n\n- EN Führungen\n- EN Konzerte\n\n> EN Kölle Alaaf',
    );
    const [req, ...more] = llm.chatRequests();
    expect(more).to.have.length(0);
    expect(req.json.response_format).to.deep.equal({ type: 'json_object' });
    expect(message(req, 'system')).to.include('from German (de) to English (en)');
    expect(JSON.parse(message(req, 'user'))).to.deep.equal({ blocks: BLOCKS });
  });

  it('composes the entry from the blocks as they are, without a model call, when the languages are the same', async () => {
    const r = await s.call('POST', '/api/common/blocks', { blocks: BLOCKS });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.processed_blocks).to.deep.equal(BLOCKS);
    expect(r.body.data.newsfeed_entry).to.equal(
      '## Neuigkeiten\n\nDer Dom ist wieder offen.\n\n- Führungen\n- Konzerte\n\n> Kölle Alaaf',
    );
    expect(llm.chatRequests()).to.have.length(0);
  });

  it('answers 502 UPSTREAM_ERROR when the model returns another number of blocks', async () => {
    llm.respond(() => ({ content: '{"blocks": [{"type": "heading", "content": "News"}]}' }));
    const r = await s.call('POST', '/api/common/blocks', {
      blocks: BLOCKS,
      source_language: 'de',
      target_language: 'fr',
    });
    expectError(r, 502, 'UPSTREAM_ERROR');
    expect(r.body.error.details).to.include({ expected: 4, got: 1 });
  });

  it('rejects no blocks, a block without content and a malformed language with 400 VALIDATION_ERROR', async () => {
    expectError(await s.call('POST', '/api/common/blocks', { blocks: [] }), 400, 'VALIDATION_ERROR');
    expectError(
      await s.call('POST', '/api/common/blocks', { blocks: [{ type: 'paragraph' }] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await s.call('POST', '/api/common/blocks', { blocks: BLOCKS, target_language: 'EN' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(llm.chatRequests()).to.have.length(0);
  });
});

describe('common and transformer endpoints without a language model', function () {
  this.timeout(30_000);
  let s: Stack;
  const post = (p: string, body: unknown) => s.call('POST', p, body);
  useStack((stack) => (s = stack));

  it('answers 503 PROVIDER_NOT_CONFIGURED naming LLM_BASE_URL, LLM_API_KEY and LLM_MODEL where a model is needed', async () => {
    const needModel: [string, unknown][] = [
      ['/api/transformer/text', { text: 'Hallo', source_language: 'de', target_language: 'en' }],
      ['/api/transformer/template', { text: 'Ada', template_content: 'Name: {{name|the name}}' }],
      ['/api/transformer/template', { text: 'Ada', template: 'Besprechung', target_language: 'en' }],
      ['/api/transformer/summarize', { text: 'Ein Text.' }],
      ['/api/common/blocks', { blocks: BLOCKS, source_language: 'de', target_language: 'en' }],
    ];
    for (const [p, body] of needModel) {
      const r = await post(p, body);
      expectError(r, 503, 'PROVIDER_NOT_CONFIGURED');
      for (const name of ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']) expect(r.body.error.message, p).to.include(name);
    }
  });

  it('answers a bad request with 400 and an unknown template with 404 before it looks for a model', async () => {
    expectError(
      await post('/api/transformer/text', { source_language: 'de', target_language: 'en' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/api/transformer/template', { text: 'x', template: 'Besprechung', template_content: '{{a}}' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await post('/api/transformer/summarize', { text: 'x', max_length: 10 }), 400, 'VALIDATION_ERROR');
    expectError(
      await post('/api/common/blocks', { blocks: [], source_language: 'de', target_language: 'en' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/api/transformer/template', { text: 'x', template: 'NoSuchTemplate' }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
  });

  it('serves what needs no model: same-language text and blocks, a template without model fields and HTML', async () => {
    const text = await post('/api/transformer/text', { text: 'Hallo', source_language: 'en', target_language: 'en' });
    expect([text.status, text.body.data?.translated_text]).to.deep.equal([200, 'Hallo']);
    const noFields = await post('/api/transformer/template', { text: 'Hallo', template_content: 'Static.' });
    expect([noFields.status, noFields.body.data?.transformed_text]).to.deep.equal([200, 'Hallo']);
    const fromContext = await post('/api/transformer/template', {
      text: 'Hallo',
      template_content: 'By {{author|who wrote it}}',
      context: { author: 'Ada' },
    });
    expect([fromContext.status, fromContext.body.data?.transformed_text]).to.deep.equal([200, 'By Ada']);
    const blocks = await post('/api/common/blocks', { blocks: BLOCKS, source_language: 'en', target_language: 'en' });
    expect(blocks.status).to.equal(200);
    const md = await post('/api/transformer/html-to-markdown', { html: '<p>Hallo <b>Welt</b></p>' });
    expect([md.status, md.body.data?.markdown]).to.deep.equal([200, 'Hallo **Welt**']);
  });

  describe('sample files', () => {
    const onDisk = () =>
      fs.readdirSync(SAMPLES).filter((f) => fs.statSync(path.join(SAMPLES, f)).isFile() && !f.startsWith('.'));

    it('lists every sample file with its size and type', async () => {
      const r = await s.call('GET', '/api/common/samples');
      expect(r.status).to.equal(200);
      const samples: { filename: string; size: number; type: string }[] = r.body.data.samples;
      expect(samples.map((x) => x.filename)).to.have.members(onDisk());
      for (const x of samples) expect(x.size, x.filename).to.equal(fs.statSync(path.join(SAMPLES, x.filename)).size);
      const type = (f: string) => samples.find((x) => x.filename === f)?.type;
      expect([
        type('sample.pdf'),
        type('image.png'),
        type('audio.mp3'),
        type('video.mp4'),
        type('blocks.json'),
        type(KOELN),
      ]).to.deep.equal(['document', 'image', 'audio', 'video', 'json', 'document']);
    });

    it('downloads each sample byte for byte with its content type and an attachment disposition', async () => {
      const types: Record<string, string> = {
        'sample.pdf': 'application/pdf',
        'image.png': 'image/png',
        'audio.mp3': 'audio/mpeg',
        'video.mp4': 'video/mp4',
        'blocks.json': 'application/json',
      };
      for (const [name, mime] of Object.entries(types)) {
        const r = await download(`${s.url}/api/common/samples/${name}`);
        expect(r.status, name).to.equal(200);
        expect(r.headers.get('content-type'), name).to.match(new RegExp(`^${mime}`));
        expect(r.headers.get('content-disposition'), name).to.include(`filename="${name}"`);
        expect(r.body.equals(fs.readFileSync(path.join(SAMPLES, name))), name).to.equal(true);
      }
    });

    it('downloads the non-ASCII Grüße aus Köln.pdf by its percent-encoded name, composed or decomposed', async () => {
      const bytes = fs.readFileSync(path.join(SAMPLES, KOELN));
      for (const name of [KOELN, KOELN.normalize('NFD')]) {
        const r = await download(`${s.url}/api/common/samples/${encodeURIComponent(name)}`);
        expect(r.status).to.equal(200);
        expect(r.body.equals(bytes)).to.equal(true);
        expect(r.headers.get('content-disposition')).to.include(`filename*=UTF-8''${encodeURIComponent(KOELN)}`);
      }
    });

    it('answers the 404 envelope to traversal with encoded and doubled separators, NUL bytes and unknown names', async () => {
      const names = [
        '..%2Fpackage.json',
        '%2e%2e%2fpackage.json',
        '..%252Fpackage.json',
        '%2F%2Fetc%2Fpasswd',
        'sample.pdf%00.png',
        'samples%2Fsample.pdf',
        '..%2F..%2Fpackage.json',
        '%2e%2e%5cpackage.json',
        '.%2Fsample.pdf',
        '..',
        '%2e%2e',
        '../../package.json',
        '..%2f..%2f..%2f..%2fetc%2fpasswd',
        'sample.PDF',
        'nope.pdf',
      ];
      for (const name of names) {
        const r = await rawRequest(s.url, `/api/common/samples/${name}`);
        expect(r.status, name).to.equal(404);
        expect(r.headers['content-type'], name).to.match(/^application\/json/);
        const body = r.json();
        expect(body.status, name).to.equal('error');
        expect(body.error.code, name).to.be.oneOf(['FILE_NOT_FOUND', 'NOT_FOUND']);
        expect(r.text, name).to.not.include('"docproc"').and.not.include('root:');
      }
      expect((await rawRequest(s.url, '/api/common/samples/sample.pdf')).status).to.equal(200);
    });
  });
});
