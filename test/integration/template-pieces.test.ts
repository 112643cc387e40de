import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { message } from '../support/servers/llm-env';
import { startLlmServer, type LlmRequest, type LlmServer } from '../support/servers/llm-server';

// A template over a text several times longer than the model's context (issue #23 point 10), on the real API, worker
// and Temporal with the OpenAI-compatible test server standing in for the local model server: the service is
// configured with the local provider on the test server's port and a context of CONTEXT tokens, and the test server
// refuses (400 context_length_exceeded) any request that does not fit that context, as the local server does.

const CONTEXT = 2048;
const TEMPLATE =
  '# {{title|a short title}}\n\n{{summary|what the text says, in three sentences}}\n\n' +
  'People: {{people|the people the text names, as a list}}';

/** About `chars` characters in paragraphs, each numbered (`Absatz <i>:`) so a test can find which request had it. */
function longText(chars: number): { text: string; paragraphs: number } {
  const paras: string[] = [];
  let size = 0;
  while (size < chars) {
    const p = `Absatz ${paras.length}: ${'Köln liegt am Rhein, und der Dom steht seit Jahrhunderten dort. '.repeat(6)}`;
    paras.push(p);
    size += p.length + 2;
  }
  return { text: paras.join('\n\n'), paragraphs: paras.length };
}

const system = (r: LlmRequest) => message(r, 'system');
const user = (r: LlmRequest) => message(r, 'user');
const piece = (r: LlmRequest) => /part (\d+) of (\d+) of a longer text/.exec(system(r));
const isMerge = (r: LlmRequest) => system(r).includes('Merge the values');
/** Characters of every message of a request. */
const promptChars = (r: LlmRequest) =>
  (r.json.messages as { content: string }[]).reduce((n, m) => n + String(m.content).length, 0);

describe('templates over a text longer than the local model’s context', function () {
  this.timeout(60_000);
  let s: Stack;
  let llm: LlmServer;

  before(async () => {
    llm = await startLlmServer({ contextTokens: CONTEXT });
  });
  useStack(
    (stack) => (s = stack),
    () => ({
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(llm.port),
      LLM_LOCAL_CONTEXT: String(CONTEXT),
      LLM_TIMEOUT_MS: '10000',
      LLM_MAX_RETRIES: '1',
    }),
  );
  after(async () => {
    await llm?.close();
  });
  beforeEach(() => llm.reset());

  /** Answers each piece with the same title, a summary and people of its own; merge calls get the default answer. */
  const answerPieces = () =>
    llm.respond((req) => {
      const m = piece(req);
      if (!m) return undefined;
      const k = Number(m[1]);
      return {
        content: JSON.stringify({ title: 'Köln am Rhein', summary: `Teil ${k}.`, people: ['Ada', `Person ${k}`] }),
      };
    });

  const runJob = async (text: string) => {
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'template', text, template_content: TEMPLATE, target_language: 'de', use_cache: false },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return s.waitJob(r.body.data.job_id);
  };

  it('fills every field from one call per piece and one merge, no request beyond the context', async () => {
    const { text, paragraphs } = longText(CONTEXT * 4 * 4);
    expect(text.length / 4).to.be.above(CONTEXT * 3.5);
    answerPieces();
    const job = await runJob(text);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');

    const pieces: number = job.results.structured_data.metadata.pieces;
    expect(pieces).to.be.at.least(4);
    const reqs = llm.chatRequests();
    const maps = reqs.filter((r) => piece(r));
    const merges = reqs.filter(isMerge);
    expect(maps).to.have.length(pieces);
    expect(merges).to.have.length(1);
    expect(reqs).to.have.length(pieces + 1);
    maps.forEach((r, i) => expect(piece(r)!.slice(1)).to.deep.equal([String(i + 1), String(pieces)]));
    // Within the context as the service counts it (3 characters a token), with room for the answer.
    for (const r of reqs) expect(promptChars(r)).to.be.at.most(CONTEXT * 3);
    // Every paragraph went to the model, in exactly one piece.
    for (let i = 0; i < paragraphs; i++) {
      const having = maps.filter((r) => user(r).includes(`Absatz ${i}:`));
      expect(having, `Absatz ${i}`).to.have.length(1);
    }
    // The merge asks only for the field the pieces disagree on, with every piece's value.
    const mergeUser = user(merges[0]);
    expect(mergeUser).to.match(/Fields:\n- summary: what the text says, in three sentences\n\n/);
    for (let k = 1; k <= pieces; k++) expect(mergeUser).to.include(`Teil ${k}.`);

    const people = ['Ada', ...Array.from({ length: pieces }, (_, i) => `Person ${i + 1}`)];
    expect(job.results.template_fields).to.deep.equal({
      title: 'Köln am Rhein',
      summary: 'summary value',
      people,
    });
    expect(job.results.transformed_text)
      .to.include('# Köln am Rhein')
      .and.include('summary value')
      .and.include(`Person ${pieces}`);
    const purposes = job.results.llm_info.requests.map((q: { purpose: string }) => q.purpose);
    expect(purposes).to.deep.equal([...Array<string>(pieces).fill('template-map'), 'template-merge']);
  });

  it('fills a text that fits the context with one call, as before, and says nothing of pieces', async () => {
    const job = await runJob('Ada und Alan haben sich am 3. Mai in Köln getroffen.');
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const reqs = llm.chatRequests();
    expect(reqs).to.have.length(1);
    expect(piece(reqs[0])).to.equal(null);
    expect(reqs[0].json.response_format.type).to.equal('json_schema');
    expect(job.results.template_fields).to.deep.equal({
      title: 'title value',
      summary: 'summary value',
      people: ['people value'],
    });
    expect(job.results.structured_data.metadata).to.not.have.property('pieces');
    expect(job.results.llm_info.requests.map((q: { purpose: string }) => q.purpose)).to.deep.equal(['template']);
  });

  it('restarting a job whose merge failed asks only the merge again: the pieces’ answers are kept', async () => {
    const { text } = longText(CONTEXT * 3 * 4);
    llm.respond((req) => {
      if (isMerge(req))
        return {
          status: 401,
          body: { error: { message: 'no', type: 'invalid_request_error', param: null, code: null } },
        };
      const k = Number(piece(req)![1]);
      return { content: JSON.stringify({ title: 'T', summary: `Teil ${k}.`, people: [] }) };
    });
    const failed = await runJob(text);
    expect(failed.status).to.equal('failed');
    const maps = llm.chatRequests().filter((r) => piece(r)).length;
    expect(maps).to.be.at.least(3);
    llm.reset();
    const restarted = await s.call('POST', `/api/event-job/${failed.job_id}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).to.equal(200);
    const done = await s.waitJob(failed.job_id);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    const again = llm.chatRequests();
    expect(again).to.have.length(1);
    expect(isMerge(again[0])).to.equal(true);
    expect(done.results.template_fields).to.deep.equal({ title: 'T', summary: 'summary value', people: [] });
    expect(done.results.structured_data.metadata.pieces).to.equal(maps);
  });
});
