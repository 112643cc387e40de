import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { verifyWebhookSignature } from '../../providers/webhook/signature';
import { pdfJob, readSse, SMALL_HTML, sleep, transformerJob, until, type SseEvent } from '../support/jobs';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Job webhooks and the job event stream, end to end: the real API and worker (in this process) on the shared
// Temporal dev server deliver to real HTTP receivers. Loopback only: the test API listens on 127.0.0.1, which is
// what lets a job's webhook point at a local receiver. Retry delays are scaled by 0.01 (100 ms, 300 ms, ...).

const TOKEN = 'tok-123';
const SECRET = 'whsec-test-signing-secret';
const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';

const phase = (r: ReceivedRequest): string | undefined => r.json?.phase;
const header = (r: ReceivedRequest, name: string): string => {
  const v = r.headers[name];
  expect(v, `header ${name}`).to.be.a('string');
  return v as string;
};

/** True when the request carries a valid signature keyed by `key`. */
function signedWith(r: ReceivedRequest, key: string): boolean {
  return verifyWebhookSignature(
    key,
    header(r, 'x-webhook-id'),
    Number(header(r, 'x-webhook-timestamp')),
    r.body,
    header(r, 'x-webhook-signature'),
  );
}

/** Every string and every payload's bytes (decoded as UTF-8) of a workflow history, as one text. */
function historyText(node: unknown): string {
  if (node instanceof Uint8Array) return Buffer.from(node).toString('utf8');
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return node.map(historyText).join('\n');
  if (node && typeof node === 'object') return Object.values(node).map(historyText).join('\n');
  return '';
}

describe('job webhooks and event stream on the real engine', function () {
  this.timeout(60_000);
  let s: Stack;
  const receivers: WebhookReceiver[] = [];

  useStack((stack) => (s = stack), { WEBHOOK_RETRY_SCALE: '0.01', WEBHOOK_SIGNING_SECRET: SECRET });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  async function receiver(opts: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
    const r = await startWebhookReceiver(opts);
    receivers.push(r);
    return r;
  }

  async function create(body: unknown): Promise<string> {
    const r = await s.call('POST', '/api/jobs/', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data.job_id;
  }

  /** The job once its log holds a line matching `re` (webhook lines are added after the job is finished). */
  async function jobWithLog(jobId: string, re: RegExp): Promise<any> {
    return until(
      async () => {
        const j = (await s.call('GET', `/api/jobs/${jobId}`)).body.data;
        return j.logs.some((l: { message: string }) => re.test(l.message)) ? j : undefined;
      },
      `a log line ${re} of ${jobId}`,
      20_000,
      100,
    );
  }

  it('delivers progress and exactly one signed completion with the token and the client’s job id', async () => {
    const hook = await receiver();
    const jobId = await create(
      transformerJob(SMALL_HTML, { webhook: { url: hook.url, token: TOKEN, jobId: 'client-7' } }),
    );
    expect((await s.waitJob(jobId)).status).to.equal('completed');
    await hook.waitFor((rs) => rs.some((r) => phase(r) === 'completed'), 10_000);
    const job = await jobWithLog(jobId, /^Webhook completed delivered/);
    await sleep(300); // anything sent late would arrive now

    const unique = [...hook.uniqueById().values()];
    const progress = unique.filter((r) => phase(r) === 'processing');
    const completions = unique.filter((r) => phase(r) === 'completed');
    expect(progress.length, 'progress events').to.be.at.least(1);
    expect(completions).to.have.length(1);
    expect(unique.filter((r) => !['processing', 'completed'].includes(phase(r)!))).to.deep.equal([]);

    // The token signs and authorises the deliveries but is nowhere in Temporal: not in the job's history (its
    // start input, parameters), not in its notifier's.
    for (const id of [jobId, `notify-${jobId}`]) {
      const text = historyText(await s.api.temporal.client.workflow.getHandle(id).fetchHistory());
      expect(text, `history of ${id} decoded (its input names the webhook URL)`).to.include(hook.url);
      expect(text, `history of ${id}`).to.not.include(TOKEN);
    }
    expect(JSON.stringify(job.parameters)).to.not.include(TOKEN);

    const done = completions[0];
    expect(done.method).to.equal('POST');
    expect(done.path).to.equal('/hook');
    expect(done.json).to.include({ phase: 'completed' });
    expect(done.json.message).to.be.a('string').and.not.equal('');
    expect(done.json.process).to.deep.equal({ id: jobId });
    expect(done.json.job).to.deep.equal({ id: 'client-7' });
    // The completion carries the synchronous endpoint's data (spec §6), not the job's structured_data.
    expect(done.json.data).to.deep.equal({ html: SMALL_HTML, markdown: job.results.structured_data.extracted_text });
    expect(done.json.data.markdown).to.include('# Report');

    for (const r of unique) {
      expect(r.headers['content-type']).to.match(/^application\/json/);
      expect(r.headers.authorization).to.equal(`Bearer ${TOKEN}`);
      expect(r.headers['x-callback-token']).to.equal(TOKEN);
      expect(header(r, 'x-webhook-id')).to.have.length.greaterThan(0);
      const ts = Number(header(r, 'x-webhook-timestamp'));
      expect(Number.isInteger(ts)).to.equal(true);
      expect(Math.abs(ts - Date.now() / 1000)).to.be.below(120);
      expect(signedWith(r, TOKEN), 'signature keyed by the token').to.equal(true);
      expect(signedWith(r, SECRET), 'the token, not the server secret, signs').to.equal(false);
    }
    for (const p of progress) {
      expect(p.json.progress).to.be.a('number').within(0, 99);
      expect(p.json.message).to.be.a('string');
      expect(p.json.process).to.deep.equal({ id: jobId });
      expect(p.json.job).to.deep.equal({ id: 'client-7' });
    }
    // A tampered body does not verify.
    expect(
      verifyWebhookSignature(
        TOKEN,
        header(done, 'x-webhook-id'),
        Number(header(done, 'x-webhook-timestamp')),
        done.body + ' ',
        header(done, 'x-webhook-signature'),
      ),
    ).to.equal(false);
    // Progress never follows the completion.
    for (const r of hook.requests) if (phase(r) === 'processing') expect(r.receivedAt).to.be.at.most(done.receivedAt);
    expect(hook.requests.at(-1)!.json.phase).to.equal('completed');
    // The token is not shown back to API clients.
    expect(job.parameters.webhook).to.deep.include({ url: hook.url, token: '[redacted]', jobId: 'client-7' });
  });

  it('retries a completion answered 500 twice until it is delivered, with one X-Webhook-Id and a log line per attempt', async () => {
    let failures = 2;
    const hook = await receiver({ respond: (r) => (phase(r) === 'completed' && failures-- > 0 ? 500 : undefined) });
    const jobId = await create(transformerJob(SMALL_HTML, { webhook: { url: hook.url, token: TOKEN } }));
    await hook.waitFor((rs) => rs.filter((r) => phase(r) === 'completed').length >= 3, 15_000);
    const job = await jobWithLog(jobId, /^Webhook completed delivered/);
    await sleep(500);

    const attempts = hook.requests.filter((r) => phase(r) === 'completed');
    expect(attempts).to.have.length(3);
    const ids = new Set(attempts.map((r) => header(r, 'x-webhook-id')));
    expect(ids.size, 'one id across retries').to.equal(1);
    for (const r of attempts) {
      expect(signedWith(r, TOKEN)).to.equal(true);
      expect(r.body).to.equal(attempts[0].body);
    }
    expect(hook.uniqueById().size).to.equal(new Set(hook.requests.map((r) => r.headers['x-webhook-id'])).size);
    expect(job.status).to.equal('completed');
    const lines: string[] = job.logs
      .map((l: { message: string }) => l.message)
      .filter((m: string) => m.startsWith('Webhook completed'));
    expect(lines, JSON.stringify(lines)).to.have.length(3);
    expect(lines[0]).to.match(/HTTP 500.*attempt 1/);
    expect(lines[1]).to.match(/HTTP 500.*attempt 2/);
    expect(lines[2]).to.match(/delivered.*attempt 3.*HTTP 200/);
    const levels = job.logs
      .filter((l: { message: string }) => l.message.startsWith('Webhook completed'))
      .map((l: { level: string }) => l.level);
    expect(levels).to.deep.equal(['warning', 'warning', 'info']);
  });

  it('does not retry a completion answered 400, and the job stays completed', async () => {
    const hook = await receiver({ respond: (r) => (phase(r) === 'completed' ? 400 : undefined) });
    const jobId = await create(transformerJob(SMALL_HTML, { webhook: { url: hook.url, token: TOKEN } }));
    const job = await jobWithLog(jobId, /^Webhook completed not delivered/);
    await sleep(1000); // 10× the first scaled retry delay
    expect(hook.requests.filter((r) => phase(r) === 'completed')).to.have.length(1);
    expect(job.status).to.equal('completed');
    expect((await s.call('GET', `/api/jobs/${jobId}`)).body.data.status).to.equal('completed');
    const line = job.logs.find((l: { message: string }) => l.message.startsWith('Webhook completed'));
    expect(line.message).to.match(/HTTP 400/);
    expect(line.level).to.equal('warning');
  });

  it('sends a failed job’s error with phase failed', async () => {
    const hook = await receiver();
    const jobId = await create(pdfJob({ webhook: { url: hook.url, token: TOKEN, jobId: 'client-pdf' } }));
    expect((await s.waitJob(jobId)).status).to.equal('failed');
    await hook.waitFor((rs) => rs.some((r) => phase(r) === 'failed'), 10_000);
    await jobWithLog(jobId, /^Webhook failed delivered/);
    const failed = hook.requests.filter((r) => phase(r) === 'failed');
    expect(failed).to.have.length(1);
    const body = failed[0].json;
    expect(body.process).to.deep.equal({ id: jobId });
    expect(body.job).to.deep.equal({ id: 'client-pdf' });
    expect(body.message).to.be.a('string').and.not.equal('');
    expect(body.error).to.include({ code: 'FILE_NOT_FOUND' });
    expect(body.error.message).to.be.a('string');
    expect(body).not.to.have.property('data');
    expect(hook.requests.some((r) => phase(r) === 'completed')).to.equal(false);
    expect(signedWith(failed[0], TOKEN)).to.equal(true);
  });

  it('signs with WEBHOOK_SIGNING_SECRET and sends no token headers when the webhook has no token', async () => {
    const hook = await receiver();
    const jobId = await create(transformerJob(SMALL_HTML, { webhook: { url: hook.url } }));
    await s.waitJob(jobId);
    await hook.waitFor((rs) => rs.some((r) => phase(r) === 'completed'), 10_000);
    for (const r of hook.requests) {
      expect(r.headers).not.to.have.property('authorization');
      expect(r.headers).not.to.have.property('x-callback-token');
      expect(signedWith(r, SECRET), 'signed with the server secret').to.equal(true);
      expect(r.json.job).to.deep.equal({ id: null });
    }
  });

  describe('Server-Sent Events', () => {
    const bodies = (events: SseEvent[]) => events.map((e) => e.data);

    it('streams the same events as the webhooks with increasing ids, ends after the final one and resumes after Last-Event-ID', async () => {
      const hook = await receiver();
      const jobId = await create(
        transformerJob(SMALL_HTML, { webhook: { url: hook.url, token: TOKEN, jobId: 'client-sse' } }),
      );
      const stream = await readSse(`${s.url}/api/jobs/${jobId}/events`);
      expect(stream.status).to.equal(200);
      expect(stream.contentType).to.match(/^text\/event-stream/);
      const events = stream.events;
      expect(events.length).to.be.at.least(2);
      for (const e of events) {
        expect(e.id, e.raw).to.be.a('number');
        expect(e.event).to.equal(e.data.phase);
        expect(e.data.process).to.deep.equal({ id: jobId });
        expect(e.data.job).to.deep.equal({ id: 'client-sse' });
      }
      for (let i = 1; i < events.length; i++) expect(events[i].id!).to.be.above(events[i - 1].id!);
      expect(events.at(-1)!.event).to.equal('completed');
      expect(events.slice(0, -1).every((e) => e.event === 'processing')).to.equal(true);
      const percents = events.filter((e) => e.event === 'processing').map((e) => e.data.progress);
      expect([...percents].sort((a, b) => a - b)).to.deep.equal(percents);

      // Every webhook the receiver got is one of the stream's events, in the same order, with the same body.
      await hook.waitFor((rs) => rs.some((r) => phase(r) === 'completed'), 10_000);
      await jobWithLog(jobId, /^Webhook completed delivered/);
      const hooks = [...hook.uniqueById().values()].map((r) => r.json);
      let at = 0;
      for (const h of hooks) {
        while (at < events.length && JSON.stringify(events[at].data) !== JSON.stringify(h)) at++;
        expect(at, `webhook ${JSON.stringify(h)} is not in the stream ${JSON.stringify(bodies(events))}`).to.be.below(
          events.length,
        );
        at++;
      }
      expect(hooks.at(-1)).to.deep.equal(events.at(-1)!.data);
      expect(new Set(hooks.map((h) => h.phase))).to.deep.equal(new Set(events.map((e) => e.data.phase)));

      // Reconnecting after the first event gets exactly the later ones.
      const resumed = await readSse(`${s.url}/api/jobs/${jobId}/events`, { 'Last-Event-ID': String(events[0].id) });
      expect(resumed.events.map((e) => e.id)).to.deep.equal(events.slice(1).map((e) => e.id));
      expect(bodies(resumed.events)).to.deep.equal(bodies(events.slice(1)));
      // The query parameter does the same for clients that cannot set headers.
      const byQuery = await readSse(`${s.url}/api/jobs/${jobId}/events?last_event_id=${events[0].id}`);
      expect(byQuery.events.map((e) => e.id)).to.deep.equal(events.slice(1).map((e) => e.id));
    });

    it('sends the final event of a job that already finished and ends', async () => {
      const done = await create(transformerJob());
      const job = await s.waitJob(done);
      const stream = await readSse(`${s.url}/api/jobs/${done}/events`);
      const last = stream.events.at(-1)!;
      expect(last.event).to.equal('completed');
      expect(last.data).to.include({ phase: 'completed' });
      expect(last.data.process).to.deep.equal({ id: done });
      expect(last.data.data).to.deep.equal({ html: SMALL_HTML, markdown: job.results.markdown });

      const failedId = await create(pdfJob());
      await s.waitJob(failedId);
      const failed = await readSse(`${s.url}/api/jobs/${failedId}/events`);
      expect(failed.events.at(-1)!.event).to.equal('failed');
      expect(failed.events.at(-1)!.data.error.code).to.equal('FILE_NOT_FOUND');
      // After the final event there is nothing to resume.
      const after = await readSse(`${s.url}/api/jobs/${done}/events`, { 'Last-Event-ID': String(last.id) });
      expect(after.events).to.deep.equal([]);
    });

    it('answers 404 with the JSON error envelope for an unknown job', async () => {
      for (const id of [UNKNOWN_JOB, 'nope']) {
        const r = await readSse(`${s.url}/api/jobs/${id}/events`);
        expect(r.status).to.equal(404);
        expect(r.contentType).to.match(/^application\/json/);
        expect(r.json).to.deep.include({ status: 'error' });
        expect(r.json.error.code).to.equal('JOB_NOT_FOUND');
      }
    });
  });
});
