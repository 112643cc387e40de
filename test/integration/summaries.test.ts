import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import type { BlobStore } from '../../core/stores/blob-store';
import { putSessionRecord, type SessionRecord } from '../../core/stores/session-store';
import { message, useLlmStack } from '../support/servers/llm-env';
import type { LlmRequest, LlmServer } from '../support/servers/llm-server';
import { sessionRecord } from '../support/sessions';

// Tracks, events, topics and stories (spec §4.5, §4.8, §4.9) over sessions seeded in the real store, through the real
// API, worker and Temporal, with the OpenAI-compatible test server. SUMMARY_CHUNK_CHARS is small, so map-reduce shows.

const BUDGET = 1000;

function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).to.equal(status);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal(code);
}

/** Markdown of about `chars` characters in paragraphs, naming its session. */
function markdown(session: string, chars: number): string {
  const para = `${session} talks about open hardware, compilers and community work in some detail. `.repeat(3);
  let out = `# ${session}\n\n`;
  while (out.length < chars) out += `${para}\n\n`;
  return out;
}

async function seed(store: BlobStore, recs: { rec: SessionRecord; chars?: number }[]): Promise<void> {
  for (const { rec, chars } of recs) {
    await store.put(rec.markdown_key, markdown(rec.session, chars ?? 300), { mime: 'text/markdown' });
    await putSessionRecord(store, rec);
  }
}

const system = (r: LlmRequest) => message(r, 'system');
const user = (r: LlmRequest) => message(r, 'user');
const isMap = (r: LlmRequest) => system(r).startsWith('Summarise the conference session');
const isMerge = (r: LlmRequest) => system(r).startsWith('Combine the partial summaries');
const isTrack = (r: LlmRequest) => system(r).startsWith('Summarise the track');
const isContribution = (r: LlmRequest) => system(r).includes('what the conference session below contributes');

/** Answers name what they were given (the sessions or labels in the user text), padded to ~500 characters. */
function summarizingModel(llm: LlmServer): void {
  llm.respond((req) => {
    if (req.json?.response_format?.type === 'json_object') return undefined; // templates: the default field values
    const names = [...user(req).matchAll(/^(?:Session: |## )(.+)$/gm)].map((m) => m[1]);
    const head = names.length ? `about ${names.join('; ')}` : 'merged';
    return { content: `${head}. ${'Some more words of summary text. '.repeat(15)}` };
  });
}

describe('tracks, events, topics and stories over the session store', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { SUMMARY_CHUNK_CHARS: String(BUDGET), STORY_TARGET_GROUPS: 'students, Fachpublikum' },
  );

  before(async () => {
    await seed(s.worker.store, [
      {
        rec: sessionRecord({
          event: 'FOSDEM 2025',
          track: 'Open Hardware',
          session: 'RISC-V boards',
          topic: 'Hardware',
        }),
      },
      {
        rec: sessionRecord({
          event: 'FOSDEM 2025',
          track: 'Open Hardware',
          session: 'FPGA tooling',
          topic: 'Hardware',
        }),
        chars: 2600,
      },
      {
        rec: sessionRecord({
          event: 'FOSDEM 2025',
          track: 'Open Hardware',
          session: 'FPGA tooling',
          language: 'en',
          topic: 'Hardware',
        }),
      },
      { rec: sessionRecord({ event: 'FOSDEM 2025', track: 'Rust', session: 'Async Rust', topic: 'Languages' }) },
      {
        rec: sessionRecord({ event: 'Konferenz Zürich', track: 'Rust', session: 'Embedded Rust', topic: 'Languages' }),
      },
      { rec: sessionRecord({ event: 'Konferenz Zürich', track: 'Keynotes', session: 'Opening', topic: '' }) },
    ]);
  });

  beforeEach(() => summarizingModel(llm));

  it('lists the tracks and topics with their session counts (a session in two languages counts once)', async () => {
    const tracks = await s.call('GET', '/api/tracks/available');
    expect(tracks.status).to.equal(200);
    expect(tracks.body.data.tracks).to.deep.include.members([
      { name: 'Keynotes', session_count: 1 },
      { name: 'Open Hardware', session_count: 2 },
      { name: 'Rust', session_count: 2 },
    ]);
    const topics = await s.call('GET', '/api/story/topics');
    expect(topics.body.data.topics).to.deep.include.members([
      { name: 'Hardware', session_count: 2 },
      { name: 'Languages', session_count: 2 },
    ]);
    expect(topics.body.data.topics.map((t: { name: string }) => t.name)).to.not.include('');
    const groups = await s.call('GET', '/api/story/target-groups');
    expect(groups.body.data).to.deep.equal({ target_groups: ['students', 'Fachpublikum'] });
    expect(llm.chatRequests()).to.have.length(0);
  });

  it('summarises a track: each session, a long one piece by piece, then the track through its template; every call within the budget', async () => {
    const r = await s.call('POST', '/api/tracks/Open%20Hardware/summary', { target_language: 'de' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.data;
    expect(d.track_name).to.equal('Open Hardware');
    expect(d.session_count).to.equal(2);
    expect(d.sessions.map((x: { name: string }) => x.name)).to.deep.equal(['FPGA tooling', 'RISC-V boards']);
    expect(d.sessions[1].summary).to.match(/^about RISC-V boards\./);
    // The German record of FPGA tooling (2,600 characters) was cut into pieces, each summarised, then merged.
    const reqs = llm.chatRequests();
    const fpgaMaps = reqs.filter((q) => isMap(q) && user(q).startsWith('Session: FPGA tooling'));
    expect(fpgaMaps.length).to.be.at.least(3);
    expect(reqs.filter(isMerge)).to.have.length(1);
    expect(d.sessions[0].summary).to.match(/^about FPGA tooling \(part 1\); FPGA tooling \(part 2\)/);
    // The track summary is the TrackSummary template (German variant) filled by the model.
    const template = reqs.filter((q) => q.json?.response_format?.type === 'json_object');
    expect(template).to.have.length(1);
    expect(user(template[0]!)).to.include('## FPGA tooling').and.include('## RISC-V boards');
    expect(d.summary).to.include('title value');
    expect(reqs).to.have.length(fpgaMaps.length + 1 + 1 + 1);
    for (const q of reqs.filter((x) => !x.json?.response_format))
      expect(user(q).length, system(q)).to.be.at.most(BUDGET);
  });

  it('map-reduce over many sessions: one call per session, merges level by level, each within a small context', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      rec: sessionRecord({ event: 'Big Event', track: 'Big Track', session: `Talk ${String(i).padStart(2, '0')}` }),
      chars: 700,
    }));
    await seed(s.worker.store, many);
    const r = await s.call('POST', '/api/tracks/Big%20Track/summary', {
      template: 'TrackSummary',
      target_language: 'en',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.session_count).to.equal(40);
    expect(r.body.data.sessions).to.have.length(40);
    const reqs = llm.chatRequests();
    expect(reqs.filter(isMap)).to.have.length(40);
    const merges = reqs.filter(isMerge);
    expect(merges.length).to.be.at.least(2);
    for (const q of [...reqs.filter(isMap), ...merges]) expect(user(q).length).to.be.at.most(BUDGET);
    const final = reqs.filter((q) => q.json?.response_format?.type === 'json_object');
    expect(final).to.have.length(1);
    // Every session reached the final call through the merges: the merges' inputs name all 40 talks.
    const named = new Set(merges.flatMap((q) => [...user(q).matchAll(/## (Talk \d\d)/g)].map((m) => m[1])));
    expect(named.size).to.equal(40);
    expect(reqs).to.have.length(40 + merges.length + 1);
  });

  it('summarize_all answers one summary per session and no track summary', async () => {
    const r = await s.call('POST', '/api/tracks/Rust/summarize_all');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data).to.deep.equal({
      track_name: 'Rust',
      summaries: [
        { session: 'Async Rust', summary: r.body.data.summaries[0].summary },
        { session: 'Embedded Rust', summary: r.body.data.summaries[1].summary },
      ],
    });
    expect(r.body.data.summaries[1].summary).to.match(/^about Embedded Rust\./);
    expect(llm.chatRequests().every(isMap)).to.equal(true);
    expect(llm.chatRequests()).to.have.length(2);
  });

  it('summarises an event track by track', async () => {
    const r = await s.call('POST', '/api/events/Konferenz%20Z%C3%BCrich/summary', { target_language: 'en' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.data;
    expect(d.event_name).to.equal('Konferenz Zürich');
    expect(d.total_sessions).to.equal(2);
    expect(d.tracks.map((t: { name: string; session_count: number }) => [t.name, t.session_count])).to.deep.equal([
      ['Keynotes', 1],
      ['Rust', 1],
    ]);
    expect(d.tracks[1].summary).to.match(/^about Embedded Rust\./);
    expect(d.summary).to.include('title value');
    const reqs = llm.chatRequests();
    expect(reqs.filter(isMap)).to.have.length(2);
    expect(reqs.filter(isTrack)).to.have.length(2);
    const final = reqs.filter((q) => q.json?.response_format?.type === 'json_object');
    expect(user(final[0]!)).to.include('## Keynotes').and.include('## Rust');
  });

  it('writes a story on a topic for a target group from what each session contributes', async () => {
    const r = await s.call('POST', '/api/story/generate', {
      topic: 'Languages',
      target_group: 'STUDENTS',
      target_language: 'en',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.data;
    expect(d.topic).to.equal('Languages');
    expect(d.target_group).to.equal('students');
    expect(d.sessions_used.map((x: { name: string }) => x.name)).to.deep.equal(['Async Rust', 'Embedded Rust']);
    expect(d.sessions_used[0].contribution).to.match(/^about Async Rust\./);
    expect(d.story).to.include('story value');
    const contributions = llm.chatRequests().filter(isContribution);
    expect(contributions).to.have.length(2);
    expect(system(contributions[0]!)).to.include('"Languages"').and.include('students');
  });

  it('answers 404 for an unknown track, event, topic, target group or template, and 400 for invalid bodies, before any model call', async () => {
    expectError(await s.call('POST', '/api/tracks/Nope/summary'), 404, 'TRACK_NOT_FOUND');
    expectError(await s.call('POST', '/api/tracks/Nope/summarize_all', {}), 404, 'TRACK_NOT_FOUND');
    expectError(await s.call('POST', '/api/tracks/..%2F..%2Fetc/summary'), 404, 'TRACK_NOT_FOUND');
    expectError(await s.call('POST', '/api/events/Nope/summary'), 404, 'EVENT_NOT_FOUND');
    expectError(await s.call('POST', '/api/events/..%2F..%2F/summary'), 404, 'EVENT_NOT_FOUND');
    expectError(
      await s.call('POST', '/api/story/generate', { topic: 'Nope', target_group: 'students' }),
      404,
      'TOPIC_NOT_FOUND',
    );
    const group = await s.call('POST', '/api/story/generate', { topic: 'Hardware', target_group: 'aliens' });
    expectError(group, 404, 'NOT_FOUND');
    expect(group.body.error.details.target_groups).to.deep.equal(['students', 'Fachpublikum']);
    expectError(
      await s.call('POST', '/api/tracks/Rust/summary', { template: 'NoSuchTemplate' }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    expectError(
      await s.call('POST', '/api/tracks/Rust/summary', { target_language: 'english' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await s.call('POST', '/api/events/FOSDEM%202025/summary', { template: 42 }), 400, 'VALIDATION_ERROR');
    const missing = await s.call('POST', '/api/story/generate', {});
    expectError(missing, 400, 'VALIDATION_ERROR');
    expect(missing.body.error.details.issues.map((i: { path: string }) => i.path)).to.include.members([
      'topic',
      'target_group',
    ]);
    expect(llm.chatRequests()).to.have.length(0);
  });
});

describe('a summary that outlives MEDIA_SYNC_WAIT_MS', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { MEDIA_SYNC_WAIT_MS: '1000', LLM_TIMEOUT_MS: '8000' },
  );

  it('answers 504 naming the job, and the job goes on to hold the same data', async () => {
    await seed(s.worker.store, [{ rec: sessionRecord({ event: 'E', track: 'Slow', session: 'Only talk' }) }]);
    summarizingModel(llm);
    // The first call never answers: the request's wait ends long before the model's timeout; the retry answers.
    llm.hang(1);
    const r = await s.call('POST', '/api/tracks/Slow/summarize_all');
    expectError(r, 504, 'TIMEOUT');
    const job = await s.waitJob(r.body.error.details.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.track_name).to.equal('Slow');
    expect(job.results.summaries[0].summary).to.match(/^about Only talk\./);
  });
});
