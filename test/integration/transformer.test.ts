import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import { LLM_KEY, LLM_MODEL, message, useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';

// The transformer endpoints (spec §4.3) on the real API and worker, the shared Temporal dev server and the
// OpenAI-compatible test server, all over HTTP on loopback. Every request the service sends to the model is checked.

const MEETING = 'Ada und Alan haben sich am 3. Mai in Köln getroffen und beschlossen, das Projekt fortzusetzen.';
const BESPRECHUNG_FIELDS = [
  'date',
  'location',
  'participants',
  'tags',
  'title',
  'summary',
  'topics',
  'decisions',
  'action_items',
  'next_steps',
];

function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).to.equal(status);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal(code);
  expect(r.body.error.message).to.be.a('string').and.not.equal('');
}

describe('transformer endpoints with a language model', function () {
  this.timeout(30_000);
  let s: Stack;
  let llm: LlmServer;
  const post = (path: string, body: unknown) => s.call('POST', `/api/transformer/${path}`, body);

  useLlmStack((stack, server) => {
    s = stack;
    llm = server;
  });

  describe('POST /api/transformer/text', () => {
    it('translates through the model, naming both languages, and answers the model text', async () => {
      const r = await post('text', { text: 'Guten Morgen, Köln.', source_language: 'de', target_language: 'en' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.headers.get('x-cache')).to.equal('miss');
      expect(r.body.data).to.deep.equal({
        original_text: 'Guten Morgen, Köln.',
        translated_text: 'Echo: Guten Morgen, Köln.',
        source_language: 'de',
        target_language: 'en',
      });
      const reqs = llm.chatRequests();
      expect(reqs).to.have.length(1);
      expect(reqs[0].json.model).to.equal(LLM_MODEL);
      expect(reqs[0].headers.authorization).to.equal(`Bearer ${LLM_KEY}`);
      expect(message(reqs[0], 'system')).to.include('from German (de) to English (en)');
      expect(message(reqs[0], 'user')).to.equal('Guten Morgen, Köln.');
    });

    it('answers the text unchanged and calls no model when source and target language are the same', async () => {
      const r = await post('text', { text: 'Bleibt so.', source_language: 'de', target_language: 'de' });
      expect(r.status).to.equal(200);
      expect(r.body.data.translated_text).to.equal('Bleibt so.');
      expect(llm.chatRequests()).to.have.length(0);
    });

    it('rejects a missing text and a language that is not a two-letter code with 400 VALIDATION_ERROR', async () => {
      const missing = await post('text', { target_language: 'en' });
      expectError(missing, 400, 'VALIDATION_ERROR');
      expect(missing.body.error.details.issues.map((i: { path: string }) => i.path)).to.include('text');
      expectError(await post('text', { text: 'x', target_language: 'english' }), 400, 'VALIDATION_ERROR');
      expect(llm.chatRequests()).to.have.length(0);
    });
  });

  describe('POST /api/transformer/template', () => {
    it('sends each field description, the context JSON and both language names, in JSON mode', async () => {
      const r = await post('template', {
        text: 'Ada Lovelace lebt in London.',
        template_content:
          'Name: {{name|the full name of the person}}\nCity: {{city|the city of the person}}\nEvent: ' +
          '{{event}}\n\n{{text}}',
        additional_field_descriptions: { city: 'the town where the person lives, as written in the text' },
        context: { event: 'Konferenz 2024', speaker_count: 3 },
        source_language: 'de',
        target_language: 'en',
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.template_fields).to.deep.equal({ name: 'name value', city: 'city value' });
      expect(r.body.data.transformed_text).to.equal(
        'Name: name value\nCity: city value\nEvent: Konferenz 2024\n\nAda Lovelace lebt in London.',
      );
      expect(r.body.data.original_text).to.equal('Ada Lovelace lebt in London.');

      const [req, ...more] = llm.chatRequests();
      expect(more).to.have.length(0);
      expect(req.json.model).to.equal(LLM_MODEL);
      expect(req.json.response_format).to.deep.equal({ type: 'json_object' });
      expect(req.headers.authorization).to.equal(`Bearer ${LLM_KEY}`);
      const user = message(req, 'user');
      expect(user).to.include('- name: the full name of the person');
      expect(user).to.include('- city: the town where the person lives, as written in the text');
      expect(user).to.not.include('the city of the person');
      expect(user).to.not.match(/^- event:/m);
      expect(user).to.include(JSON.stringify({ event: 'Konferenz 2024', speaker_count: 3 }, null, 2));
      expect(user).to.include('Source language: German (de)');
      expect(user).to.include('Target language: English (en)');
      expect(user).to.include('Ada Lovelace lebt in London.');
      expect(message(req, 'system')).to.include('Write every value in English (en)');
    });

    it('fills a named template in its language variant from the model fields', async () => {
      const en = await post('template', {
        text: MEETING,
        template: 'Besprechung',
        source_language: 'de',
        target_language: 'en',
      });
      expect(en.status, JSON.stringify(en.body)).to.equal(200);
      expect(Object.keys(en.body.data.template_fields)).to.have.members(BESPRECHUNG_FIELDS);
      expect(en.body.data.transformed_text)
        .to.include('# title value')
        .and.include('## Summary\n\nsummary value')
        .and.include(MEETING);
      const enUser = message(llm.chatRequests()[0], 'user');
      expect(enUser).to.include('- date: Date of the meeting as YYYY-MM-DD');
      expect(enUser).to.include('- location: Where the meeting took place');
      expect(message(llm.chatRequests()[0], 'system')).to.include('experienced minute-taker');

      const de = await post('template', { text: MEETING, template: 'Besprechung' });
      expect(de.status).to.equal(200);
      expect(de.body.data.transformed_text).to.include('## Zusammenfassung');
      expect(message(llm.chatRequests()[1], 'user'))
        .to.include('- date: Datum der Besprechung')
        .and.include('Target language: German (de)');
    });

    it('answers 404 TEMPLATE_NOT_FOUND for an unknown or path-like template name without calling the model', async () => {
      const r = await post('template', { text: 'x', template: 'NoSuchTemplate' });
      expectError(r, 404, 'TEMPLATE_NOT_FOUND');
      expect(r.body.error.details.template).to.equal('NoSuchTemplate');
      expectError(await post('template', { text: 'x', template: '../package' }), 404, 'TEMPLATE_NOT_FOUND');
      expect(llm.chatRequests()).to.have.length(0);
    });

    it('rejects both template and template_content, and neither, with 400 VALIDATION_ERROR', async () => {
      expectError(
        await post('template', { text: 'x', template: 'Besprechung', template_content: '{{a}}' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await post('template', { text: 'x' }), 400, 'VALIDATION_ERROR');
      expect(llm.chatRequests()).to.have.length(0);
    });

    it('fills the README example’s single-brace fields with descriptions: title and summary asked of the model', async () => {
      const r = await post('template', {
        text: MEETING,
        template_content: '# {title|a short title}\n\n{summary|three sentences}',
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.template_fields).to.deep.equal({ title: 'title value', summary: 'summary value' });
      expect(r.body.data.transformed_text).to.equal('# title value\n\nsummary value');
      const user = message(llm.chatRequests()[0], 'user');
      expect(user).to.include('- title: a short title').and.include('- summary: three sentences');
    });

    it('returns the text unchanged for a template without fields and calls no model', async () => {
      const r = await post('template', {
        text: 'Unverändert {bleibt} das.',
        template_content: '# Nur eine Überschrift\n\nOhne Felder.',
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data).to.deep.equal({
        original_text: 'Unverändert {bleibt} das.',
        transformed_text: 'Unverändert {bleibt} das.',
        template_fields: {},
      });
      expect(llm.chatRequests()).to.have.length(0);
    });
  });

  describe('POST /api/transformer/summarize', () => {
    it('clips the summary to max_length at a sentence boundary when the model answers longer', async () => {
      const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} of a summary that is far too long.`).join(
        ' ',
      );
      llm.respond(() => ({ content: long }));
      const r = await post('summarize', { text: 'Ein Text über Köln. '.repeat(20), max_length: 200 });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const summary: string = r.body.data.summary;
      expect(summary.length).to.be.at.most(200).and.at.least(100);
      expect(long.startsWith(summary)).to.equal(true);
      expect(summary.endsWith('.')).to.equal(true);
      expect(message(llm.chatRequests()[0], 'system')).to.include('at most 200 characters');
    });

    it('summarises a 60,000-character text map-reduce in chunks of at most about 13,000 characters', async () => {
      const para = (i: number) => `Absatz ${i}: ${'Köln liegt am Rhein und hat einen Dom. '.repeat(25)}`;
      const text = Array.from({ length: 62 }, (_, i) => para(i))
        .join('\n\n')
        .slice(0, 60_000);
      expect(text.length).to.equal(60_000);
      let n = 0;
      llm.respond((req) => ({
        content: /at most 300 characters/.test(message(req, 'system')) ? 'Final summary.' : `Part summary ${++n}.`,
      }));
      const r = await post('summarize', { text, max_length: 300, use_cache: false });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.summary).to.equal('Final summary.');
      const reqs = llm.chatRequests();
      expect(reqs.length).to.be.at.least(6);
      for (const q of reqs) expect(message(q, 'user').length).to.be.at.most(13_000);
      const last = message(reqs[reqs.length - 1], 'user');
      for (let i = 1; i <= n; i++) expect(last).to.include(`Part summary ${i}.`);

      // The same operation as a job shows each model call's purpose in the job's usage.
      llm.reset();
      llm.respond((req) => ({
        content: /at most 300 characters/.test(message(req, 'system')) ? 'Final summary.' : 'Part.',
      }));
      const job = await s.call('POST', '/api/jobs/', {
        job_type: 'transformer',
        parameters: { operation: 'summarize', text, max_length: 300, use_cache: false },
      });
      expect(job.status, JSON.stringify(job.body)).to.equal(200);
      const done = await s.waitJob(job.body.data.job_id);
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
      const purposes = done.results.llm_info.requests.map((q: { purpose: string }) => q.purpose);
      expect(purposes.filter((p: string) => p === 'summary-map').length).to.be.at.least(5);
      expect(purposes[purposes.length - 1]).to.equal('summary');
    });

    it('rejects an empty text and a max_length under 50 with 400 VALIDATION_ERROR', async () => {
      expectError(await post('summarize', { text: '' }), 400, 'VALIDATION_ERROR');
      expectError(await post('summarize', { text: 'x', max_length: 10 }), 400, 'VALIDATION_ERROR');
      expectError(await post('summarize', { text: 'x', max_length: 'long' }), 400, 'VALIDATION_ERROR');
      expect(llm.chatRequests()).to.have.length(0);
    });
  });

  describe('HTML endpoints', () => {
    const HTML =
      '<h1>Bericht</h1><p>Mit <b>fett</b> und <a href="https://example.com/a">Link</a>.</p><ul><li>eins</li><li>zwei</li></ul>' +
      '<table><tr><th>Stadt</th><th>Land</th></tr><tr><td colspan="2">Köln, DE</td></tr><tr><td ' +
      'rowspan="2">Bern</td><td>CH</td></tr><tr><td>BE</td></tr></table>';

    it('converts headings, emphasis, links, lists and tables to Markdown without a model call', async () => {
      const r = await post('html-to-markdown', { html: HTML });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const md: string = r.body.data.markdown;
      expect(r.body.data.html).to.equal(HTML);
      expect(md)
        .to.include('# Bericht')
        .and.include('**fett**')
        .and.include('[Link](https://example.com/a)')
        .and.include('- eins\n- zwei');
      expect(md)
        .to.match(/\| Stadt \| Land \|/)
        .and.match(/\| Köln, DE \| Köln, DE \|/)
        .and.match(/\| Bern \| BE\s*\|/);
      expect(llm.chatRequests()).to.have.length(0);
    });

    it('extracts each table as headers and rows with colspan and rowspan expanded', async () => {
      const r = await post('extract-tables', { html: `${HTML}<table><tr><td>a</td><td>b</td></tr></table>` });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.tables).to.deep.equal([
        {
          headers: ['Stadt', 'Land'],
          rows: [
            ['Köln, DE', 'Köln, DE'],
            ['Bern', 'CH'],
            ['Bern', 'BE'],
          ],
        },
        { headers: [], rows: [['a', 'b']] },
      ]);
    });

    it('rejects a body without html with 400 and HTML nested too deeply with 422 UNPROCESSABLE_INPUT', async () => {
      expectError(await post('html-to-markdown', { markdown: '# x' }), 400, 'VALIDATION_ERROR');
      expectError(await post('extract-tables', { html: 42 }), 400, 'VALIDATION_ERROR');
      const deep = `${'<div>'.repeat(1500)}x${'</div>'.repeat(1500)}`;
      const r = await post('html-to-markdown', { html: deep, use_cache: false });
      expectError(r, 422, 'UNPROCESSABLE_INPUT');
      // A small page is converted by the API itself (no job); as a job (asked for with wait_ms) it fails the same way.
      expect(r.body.error.details).to.deep.equal({ max_depth: 1000 });
      const asJob = await post('html-to-markdown?wait_ms=60000', { html: deep, use_cache: false });
      expectError(asJob, 422, 'UNPROCESSABLE_INPUT');
      expect(asJob.body.error.details).to.include({ max_depth: 1000 });
      expect(asJob.body.error.details.job_id).to.be.a('string');
    });
  });

  describe('template catalog', () => {
    it('lists every template with its languages and title', async () => {
      const r = await s.call('GET', '/api/transformer/templates');
      expect(r.status).to.equal(200);
      const byName = new Map<string, any>(r.body.data.templates.map((t: { name: string }) => [t.name, t]));
      expect([...byName.keys()]).to.include.members(['Besprechung', 'BlogPost', 'Session', 'Story']);
      expect(byName.get('Besprechung')).to.include({ title: 'Besprechungsprotokoll' });
      expect(byName.get('Besprechung').languages).to.have.members(['de', 'en']);
    });

    it('shows a template with its fields, and the English variant with ?language=en', async () => {
      const de = await s.call('GET', '/api/transformer/templates/Besprechung');
      expect(de.status).to.equal(200);
      expect(de.body.data).to.include({ name: 'Besprechung', language: null, has_system_prompt: true });
      expect(de.body.data.content).to.include('title: Besprechungsprotokoll');
      expect(de.body.data.fields.map((f: { name: string }) => f.name)).to.have.members(BESPRECHUNG_FIELDS);
      expect(de.body.data.fields.find((f: { name: string }) => f.name === 'location').description).to.match(
        /^Ort der Besprechung/,
      );
      const en = await s.call('GET', '/api/transformer/templates/Besprechung?language=en');
      expect(en.status).to.equal(200);
      expect(en.body.data.language).to.equal('en');
      expect(en.body.data.content).to.include('title: Meeting minutes');
      expect(en.body.data.fields.find((f: { name: string }) => f.name === 'date').description).to.match(
        /^Date of the meeting/,
      );
    });

    it('answers 404 TEMPLATE_NOT_FOUND for an unknown template and 400 for a malformed language', async () => {
      expectError(await s.call('GET', '/api/transformer/templates/NoSuchTemplate'), 404, 'TEMPLATE_NOT_FOUND');
      expectError(await s.call('GET', '/api/transformer/templates/Besprechung%2E%2E'), 404, 'TEMPLATE_NOT_FOUND');
      expectError(
        await s.call('GET', '/api/transformer/templates/Besprechung?language=english'),
        400,
        'VALIDATION_ERROR',
      );
    });
  });

  it('runs a template operation as a transformer job whose results hold the endpoint data and the LLM usage and cost', async () => {
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'template', text: `${MEETING} (job)`, template: 'Besprechung' },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const job = await s.waitJob(r.body.data.job_id);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.transformed_text).to.include('# title value').and.include('## Zusammenfassung');
    expect(Object.keys(job.results.template_fields)).to.have.members(BESPRECHUNG_FIELDS);
    const info = job.results.llm_info;
    expect(info.total_tokens).to.be.a('number').and.greaterThan(0);
    expect(info.total_cost).to.be.a('number').and.greaterThan(0);
    expect(info.requests).to.have.length(1);
    expect(info.requests[0]).to.include({ model: LLM_MODEL, purpose: 'template' });
    expect(info.requests[0].tokens).to.equal(info.total_tokens);
    expect(info.requests[0].duration_ms).to.be.a('number').and.at.least(0);
    expect(llm.chatRequests()).to.have.length(1);
  });
});
