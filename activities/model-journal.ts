import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBlobJson, writeBlobJson, type BlobStore } from '../core/stores/blob-store';
import { AppError } from '../core/errors';
import { jobModelCallKey, jobModelCallSentKey } from '../core/stores/records';
import type { ChatJsonOptions, ChatTextOptions, LlmProvider, LlmUsage } from '../domain/engines/llm';
import { heartbeating } from './job-steps';

/** A model call as sent, kept under the job before each request goes out (`jobModelCallSentKey`). */
export interface SentCall {
  /** Sent as `Idempotency-Key` by every request of the call: the same for every attempt, worker and restart. */
  idempotency_key: string;
  first_sent_at: string;
  last_sent_at: string;
  /** Times the call was handed to the provider (one per step attempt that reached it). */
  sends: number;
  /**
   * Sends that ended without an answer but surely unpaid (a refused connection, 429, 5xx, a 4xx): the others that did
   * not answer (a timeout, a cut connection, a worker that died) are in doubt and may still be computed there.
   */
  settled: number;
}

/** The idempotency key of a job's call: the job and the request's hash, so a successor computes the same. */
export const idempotencyKeyOf = (jobId: string, requestHash: string): string =>
  `docproc-${createHash('sha256').update(`${jobId}:${requestHash}`).digest('hex').slice(0, 40)}`;

/**
 * The job's view of the language model: every call heartbeats while the model thinks (a model may take minutes,
 * a heartbeat timeout is seconds), and every answered call is kept under the job, by the hash of its request. A
 * retried or restarted step, or a crashed worker's successor, gets answered calls from there and only pays for the
 * calls that never answered: "one call per chunk" holds across retries.
 *
 * A call is also recorded before it is sent ({@link SentCall}): every request carries the call's idempotency key,
 * so an endpoint that honours keys (the local model server) answers a retry, or a dead worker's successor, from the
 * request already computing or computed; and a call sent before without an answer is waited for twice as long each
 * time (`ChatTextOptions.resends`), so an endpoint that ignores keys pays a slow call a bounded number of times.
 * docs/model-calls.md gives the rules.
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
    const answer = await heartbeating(async (signal) => {
      const sent = await this.recordSend(hash);
      const resends = sent.sends - 1 - sent.settled;
      try {
        return await linked([signal, opts.signal], (own) =>
          call({ ...opts, signal: own, idempotencyKey: sent.idempotency_key, resends }),
        );
      } catch (err) {
        // A failure surely unpaid is settled; a timeout, a cut connection or a cancel stays in doubt.
        const inDoubt = !(err instanceof AppError) || err.details?.in_doubt === true;
        if (!inDoubt) await this.settle(hash, sent);
        throw err;
      }
    });
    await keepAnswer(this.store, key, answer);
    return answer;
  }

  /** Records the call as sent once more (before the request goes out) and answers the record. */
  private async recordSend(hash: string): Promise<SentCall> {
    const key = jobModelCallSentKey(this.jobId, hash);
    const before = await readBlobJson<SentCall>(this.store, key).catch(() => undefined);
    const now = new Date().toISOString();
    const sent: SentCall = {
      idempotency_key: before?.idempotency_key ?? idempotencyKeyOf(this.jobId, hash),
      first_sent_at: before?.first_sent_at ?? now,
      last_sent_at: now,
      sends: (before?.sends ?? 0) + 1,
      settled: before?.settled ?? 0,
    };
    await writeBlobJson(this.store, key, sent);
    return sent;
  }

  /** Best effort: a store that fails here leaves the send counted in doubt (it only makes the next wait longer). */
  private async settle(hash: string, sent: SentCall): Promise<void> {
    await writeBlobJson(this.store, jobModelCallSentKey(this.jobId, hash), {
      ...sent,
      settled: sent.settled + 1,
    }).catch(() => undefined);
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
