import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBlobJson, writeBlobJson, type BlobStore } from '../core/blob-store';
import { jobModelCallKey } from '../core/records';
import type { ChatJsonOptions, ChatTextOptions, LlmProvider, LlmUsage } from '../providers/llm';
import { heartbeating } from './job-steps';

/**
 * The job's view of the language model: every call heartbeats while the model thinks (a model may take minutes,
 * a heartbeat timeout is seconds), and every answered call is kept under the job, by the hash of its request. A
 * retried or restarted step, or a crashed worker's successor, gets answered calls from there and only pays for the
 * calls that never answered: "one call per chunk" holds across retries.
 */
export class JournaledModel implements LlmProvider {
  constructor(
    private readonly inner: LlmProvider,
    private readonly store: BlobStore,
    private readonly jobId: string,
  ) {}

  describe() {
    return this.inner.describe();
  }

  chatText(opts: ChatTextOptions): Promise<{ text: string; usage: LlmUsage }> {
    return this.once('text', opts, (o) => this.inner.chatText(o));
  }

  chatJson<T = Record<string, unknown>>(opts: ChatJsonOptions): Promise<{ value: T; usage: LlmUsage }> {
    return this.once('json', opts, (o) => this.inner.chatJson<T>(o));
  }

  private async once<R>(
    kind: string,
    opts: ChatTextOptions & { schemaHint?: string },
    call: (o: ChatTextOptions) => Promise<R>,
  ): Promise<R> {
    const { signal: _s, ...request } = opts;
    void _s;
    const d = this.inner.describe();
    const hash = createHash('sha256')
      .update(JSON.stringify({ kind, model: d.model, vision: d.visionModel, request }))
      .digest('hex');
    const key = jobModelCallKey(this.jobId, hash);
    // One read: an answer kept by an earlier attempt; none (or an unreadable one) means asking the model.
    const kept = await readBlobJson<R>(this.store, key).catch(() => undefined);
    if (kept !== undefined) return kept;
    const answer = await heartbeating((signal) =>
      linked([signal, opts.signal], (own) => call({ ...opts, signal: own })),
    );
    await keepAnswer(this.store, key, answer);
    return answer;
  }
}

/** How long a paid answer's journal write is retried while the store does not answer (a restarting MinIO). */
const KEEP_ANSWER_MS = 120_000;

/**
 * Writes an answered call to the journal, again and again (backoff to 5 s, heartbeating) while the store fails: an
 * answer lost to a storage outage would be paid for again by the step's retry. Gives up after `KEEP_ANSWER_MS` or
 * when the activity is cancelled.
 */
function keepAnswer(store: BlobStore, key: string, answer: unknown): Promise<void> {
  const deadline = Date.now() + KEEP_ANSWER_MS;
  return heartbeating(async (signal) => {
    for (let wait = 250; ; wait = Math.min(2 * wait, 5000)) {
      try {
        await writeBlobJson(store, key, answer);
        return;
      } catch (err) {
        if (Date.now() + wait > deadline) throw err;
        await sleep(wait, undefined, { signal });
      }
    }
  });
}

/**
 * Runs `work` with a signal of its own that aborts when any of `signals` does; the listeners go when it ends (a long
 * step makes many calls on the activity's one cancellation signal).
 */
async function linked<T>(signals: (AbortSignal | undefined)[], work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const onAbort = (e: Event) => own.abort((e.target as AbortSignal).reason);
  for (const s of sources) {
    if (s.aborted) own.abort(s.reason);
    else s.addEventListener('abort', onAbort, { once: true });
  }
  try {
    return await work(own.signal);
  } finally {
    for (const s of sources) s.removeEventListener('abort', onAbort);
  }
}

/** The model as a job's activity uses it, or null when none is configured. */
export function jobModel(llm: LlmProvider | null | undefined, store: BlobStore, jobId: string): LlmProvider | null {
  return llm ? new JournaledModel(llm, store, jobId) : null;
}
