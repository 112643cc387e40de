import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { message, useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { seedEvent, summarizingModel, summaryHistories } from '../support/summary-load';
import { MODEL_CALLS_PER_JOB } from '../../core/jobs/fanout';
import { failJobSignal } from '../../workflows/definitions';

// Issue 33 item 5: a summary job's history stays bounded however many sessions it covers. An event summary over
// 1,000 sessions in 10 tracks (seeded in the real store), through the real API, worker and Temporal dev server, with
// the OpenAI-compatible test server as the model: the job's own history and every child's stay far below Temporal's
// 51,200 events and 50 MB, and the summary covers every session, each asked of the model once.

const SESSIONS = 1000;
const TRACKS = 10;
/** The job's own history: plan, finish, record and a few slices (about 4,500 events when it made every call). */
const JOB_EVENTS = 400;
/** A slice's history: SUMMARY_SLICE_CALLS calls at three events each and the workflow tasks between them. */
const SLICE_EVENTS = 2500;

describe('an event summary over 1,000 sessions', function () {
  this.timeout(600_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { SUMMARY_CHUNK_CHARS: '12000' },
  );

  it('completes with every session while the job’s history and each slice’s stay bounded', async () => {
    const event = 'Big Conf';
    await seedEvent(s.worker.store, event, SESSIONS, TRACKS);
    summarizingModel(llm);
    const r = await s.call(
      'POST',
      `/api/events/${encodeURIComponent(event)}/summary`,
      { target_language: 'en' },
      { Prefer: 'respond-async' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const jobId: string = r.body.data.job_id;
    const job = await s.waitJob(jobId, 540_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const data = (await s.call('GET', `/api/jobs/${jobId}`)).body.data.results.structured_data;
    expect(data.metadata).to.include({ session_count: SESSIONS, track_count: TRACKS });

    // Every session asked once (a map call per session), every track summarised.
    const maps = llm.chatRequests().filter((q) => message(q, 'system').startsWith('Summarise the conference session'));
    const asked = maps.map((q) => /^Session: (.+)$/m.exec(message(q, 'user'))?.[1]);
    expect(new Set(asked).size, 'sessions asked').to.equal(SESSIONS);
    expect(maps.length, 'map calls').to.equal(SESSIONS);

    const h = await summaryHistories(s.api.temporal.client, jobId);
    const line = (f: { workflowId: string; events: number; bytes: number }) =>
      `${f.workflowId}: ${f.events} events, ${(f.bytes / 1024).toFixed(0)} KB`;
    expect(h.job.events, line(h.job)).to.be.below(JOB_EVENTS);
    expect(h.children.length, 'slices').to.be.within(5, 40);
    for (const c of h.children) expect(c.events, line(c)).to.be.below(SLICE_EVENTS);
    for (const f of [h.job, ...h.children]) expect(f.bytes, line(f)).to.be.below(5 * 1024 * 1024);
  });

  it('a summary failed in the middle of a slice ends failed, its slice cancelled, and its restart asks no answered call again', async () => {
    const event = 'Stopped Conf';
    const sessions = 300;
    await seedEvent(s.worker.store, event, sessions, 3);
    summarizingModel(llm);
    const r = await s.call(
      'POST',
      `/api/events/${encodeURIComponent(event)}/summary`,
      { target_language: 'en' },
      { Prefer: 'respond-async' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const jobId: string = r.body.data.job_id;
    const client = s.api.temporal.client;
    while (llm.chatRequests().length < 100) await new Promise((res) => setTimeout(res, 20));
    await client.workflow.getHandle(jobId).signal(failJobSignal, { reason: 'Stopped by the operator' });
    const failed = await s.waitJob(jobId, 120_000);
    expect(failed.status).to.equal('failed');
    const first = await summaryHistories(client, jobId);
    expect(first.children.length, 'slices started').to.be.at.least(1);
    const slice = await client.workflow.getHandle(first.children.at(-1)!.workflowId).describe();
    expect(slice.status.name, 'the running slice').to.equal('CANCELLED');

    const restarted = await s.call('POST', `/api/event-job/${jobId}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).to.equal(200);
    const done = await s.waitJob(jobId, 300_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.results.structured_data.metadata).to.include({ session_count: sessions, track_count: 3 });
    const maps = llm.chatRequests().filter((q) => message(q, 'system').startsWith('Summarise the conference session'));
    expect(new Set(maps.map((q) => /^Session: (.+)$/m.exec(message(q, 'user'))?.[1])).size).to.equal(sessions);
    // Only the calls in flight when the job was stopped are asked again.
    expect(maps.length, 'map calls over both runs').to.be.at.most(sessions + MODEL_CALLS_PER_JOB);
  });
});
