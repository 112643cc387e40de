/**
 * What the chaos tests check of a finished run, shared by the `npm start` and the S3 layout cases: the API as a client
 * sees it, each job's own result, one completion webhook per job, no model call answered twice, and which kill a
 * retried step's failure points to.
 */
import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common';
import type { ChaosJob } from './chaos-batch';
import type { KillRecord } from './chaos-figures';
import type { ImageInput } from './chaos-inputs';
import { completedWebhooks } from '../servers/cluster';
import type { LlmDouble } from '../servers/llm-double';
import type { WebhookReceiver } from '../servers/webhook-receiver';

export type ApiClient = ReturnType<typeof apiClient>;

export function apiClient(url: string) {
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, {
      method,
      headers: body !== undefined ? { 'content-type': 'application/json' } : {},
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const data = async (p: string) => {
    const r = await call('GET', p);
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body.data;
  };
  return {
    post: (p: string, body: unknown) => call('POST', p, body),
    job: (id: string) => data(`/api/jobs/${id}`),
    batch: (id: string) => data(`/api/jobs/batch/${id}`),
    /** An image OCR upload answered at once (202) with its job. */
    uploadImage: async (image: ImageInput): Promise<string> => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(image.bytes)], { type: 'image/png' }), 'page.png');
      const res = await fetch(`${url}/api/imageocr/process`, {
        method: 'POST',
        headers: { Prefer: 'respond-async' },
        body: form,
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).to.equal(202);
      return body.data.job_id as string;
    },
  };
}

export async function checkJob(api: ApiClient, j: ChaosJob): Promise<void> {
  const job = await api.job(j.jobId!);
  expect(job.status, `${j.clientId} (${j.kind}, ${j.jobId}): ${JSON.stringify(job.error)}`).to.equal('completed');
  const done = job.logs.filter((l: { message: string }) => l.message === 'Job completed');
  expect(done, `${j.clientId} completed once`).to.have.length(1);
  j.check(job);
}

/** A job's activity events (for a failure message): type, attempt, failure, with times relative to `t0`. */
export async function activityTrail(address: string, jobId: string, t0: number): Promise<string> {
  const connection = await Connection.connect({ address });
  try {
    const events = (await new Client({ connection }).workflow.getHandle(jobId).fetchHistory()).events ?? [];
    return events
      .filter(
        (e) =>
          /^ACTIVITY|^WORKFLOW_TASK_(TIMED|FAILED)/.test(String(e.eventType ?? '')) ||
          e.activityTaskScheduledEventAttributes ||
          e.activityTaskStartedEventAttributes ||
          e.activityTaskCompletedEventAttributes ||
          e.activityTaskFailedEventAttributes ||
          e.activityTaskTimedOutEventAttributes,
      )
      .map((e) => {
        const t = ((tsToMs(e.eventTime) - t0) / 1000).toFixed(1);
        const a = e.activityTaskScheduledEventAttributes;
        const st = e.activityTaskStartedEventAttributes;
        const what = a
          ? `scheduled ${a.activityType?.name} (${a.activityId})`
          : st
            ? `started attempt ${st.attempt} by ${st.identity} after ${st.lastFailure?.message ?? '-'}`
            : e.activityTaskTimedOutEventAttributes
              ? `timed out: ${e.activityTaskTimedOutEventAttributes.failure?.message}`
              : e.activityTaskFailedEventAttributes
                ? `failed: ${e.activityTaskFailedEventAttributes.failure?.message}`
                : e.activityTaskCompletedEventAttributes
                  ? 'completed'
                  : String(e.eventType);
        return `        ${t} s  #${e.eventId} ${what}`;
      })
      .join('\n');
  } finally {
    await connection.close();
  }
}

/** Which kill a step's failure points to: a lost heartbeat to a dead worker or server, an engine that ended, a model that did not answer. */
export function blame(cause: string, k: KillRecord): boolean {
  if (/heartbeat timeout|start-?to-?close/i.test(cause))
    return k.process === 'worker' || k.process.startsWith('Temporal');
  if (/speech engine/i.test(cause)) return k.process === 'speech engine';
  if (/model|llm|upstream|connect|socket|ECONN/i.test(cause)) return k.process.startsWith('LLM');
  return true;
}

/** One completion webhook per job (one event id: a retried delivery repeats it), for exactly `jobIds`; none failed. */
export function expectOneCompletionWebhookEach(hook: WebhookReceiver, jobIds: string[]): void {
  const completed = completedWebhooks(hook);
  expect([...completed.keys()].sort()).to.deep.equal([...jobIds].sort());
  for (const [id, events] of completed) expect(events.size, `completion events of ${id}`).to.equal(1);
  expect(hook.requests.filter((r) => r.json?.phase === 'failed')).to.deep.equal([]);
}

/**
 * No model call answered twice, and every call asked was answered (once); on a failure, the doubled calls with their
 * journal lines and their jobs' activity trails. Answers the answered calls by request key.
 */
export async function expectModelCallsAnsweredOnce(
  double: LlmDouble,
  jobs: ChaosJob[],
  temporalAddress: string,
  t0: number,
): Promise<ReturnType<LlmDouble['answeredByKey']>> {
  const answered = double.answeredByKey();
  const twice = [...answered.values()]
    .filter((a) => a.length > 1)
    .map((a) => {
      const all = double.entries().filter((e) => e.key === a[0].key);
      const seen = all.map((e) => `${e.event} by ${e.pid} at ${((e.t - t0) / 1000).toFixed(1)} s`).join(', ');
      return `${a[0].marker} ×${a.length} (${seen})`;
    });
  for (const t of twice) {
    const marker = t.split(' ')[0].toLowerCase();
    const j = jobs.find((x) => JSON.stringify(x.spec.parameters).toLowerCase().includes(marker));
    if (j) console.log(`${t}: ${j.jobId}\n${await activityTrail(temporalAddress, j.jobId!, t0)}`);
  }
  expect(twice, 'model calls answered twice').to.deep.equal([]);
  const asked = new Set(
    double
      .entries()
      .filter((e) => e.event === 'received')
      .map((e) => e.key),
  );
  expect(
    [...asked].filter((key) => !answered.has(key)),
    'calls never answered',
  ).to.deep.equal([]);
  return answered;
}
