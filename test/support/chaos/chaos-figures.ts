/**
 * The chaos tests' figures: a health prober running through the whole test, one record per process killed (what it
 * was doing, when, when the stack served again, when its replacement was ready), the jobs whose steps were retried
 * after each kill (from the workflow histories), and a table of it all for the test output.
 */
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

export interface HealthSample {
  /** When the request was sent and when its answer came (ms since the epoch). */
  sent: number;
  at: number;
  ok: boolean;
}

/** GET /api/health every `everyMs` (each request bounded by 5 s) until `stop()`. */
export class HealthProbe {
  readonly samples: HealthSample[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly url: () => string,
    everyMs = 200,
  ) {
    this.done = (async () => {
      while (this.running) {
        const sent = Date.now();
        let ok = false;
        try {
          const res = await fetch(`${this.url()}/api/health`, { signal: AbortSignal.timeout(5000) });
          const body = (await res.json()) as { status?: string };
          ok = res.status === 200 && body.status === 'ok';
        } catch {
          ok = false;
        }
        this.samples.push({ sent, at: Date.now(), ok });
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  /** The first answer 'ok' to a request sent after `t`. */
  firstOkAfter(t: number): number | undefined {
    return this.samples.find((s) => s.sent >= t && s.ok)?.at;
  }

  /** Whether any request sent after `t` (and answered before `until`) was not 'ok'. */
  downBetween(t: number, until: number): boolean {
    return this.samples.some((s) => s.sent >= t && s.at <= until && !s.ok);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

export interface KillRecord {
  /** The process, as the table names it. */
  process: string;
  pid: number;
  /** What it was doing when it was killed (observed, not assumed). */
  doing: string;
  /** When it was killed (ms since the epoch). */
  at: number;
  /** First /api/health 'ok' to a request sent after the kill. */
  servedAgain?: number;
  /** Whether health said anything but 'ok' meanwhile. */
  healthDropped?: boolean;
  /** When its replacement was ready (restarted by the launcher, or by the test for the LLM double). */
  replaced?: number;
  /** How the replacement was recognised. */
  replacedBy?: string;
  /** The jobs' steps running when it was killed (a snapshot taken just before the kill). */
  running?: RunningStep[];
  /** Jobs with a step running at the kill that had to run again, and how many such steps. */
  retriedJobs?: number;
  retriedSteps?: number;
  /** Why each retried step's attempt failed (the previous attempt's failure, from the history). */
  causes?: string[];
  /** Requests the client had to send again. */
  clientRetries?: number;
}

/** A job's step that was running (an activity attempt started) when a snapshot was taken. */
export interface RunningStep {
  jobId: string;
  activityId: string;
  type: string;
  attempt: number;
}

/** The steps of `jobIds` running now, from Temporal (each job's pending activities in state STARTED). */
export async function runningSteps(address: string, jobIds: string[]): Promise<RunningStep[]> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    const per = await Promise.all(
      jobIds.map(async (jobId) => {
        const d = await client.workflow
          .getHandle(jobId)
          .describe()
          .catch(() => undefined);
        if (!d) return [];
        return (d.raw.pendingActivities ?? [])
          .filter((a) => a.state === STARTED)
          .map((a) => ({
            jobId,
            activityId: a.activityId ?? '',
            type: a.activityType?.name ?? '?',
            attempt: a.attempt ?? 1,
          }));
      }),
    );
    return per.flat();
  } finally {
    await connection.close();
  }
}

/**
 * Which of the steps running at each kill (`kill.running`) had to run again: the history records each activity's
 * last attempt with its number, so a step whose last attempt is later than the one running at the kill was retried.
 * Fills `retriedJobs` and `retriedSteps`.
 */
export async function attributeRetries(
  address: string,
  kills: KillRecord[],
  blame: (cause: string, kill: KillRecord) => boolean = () => true,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const lastAttempts = new Map<string, Map<string, { attempt: number; cause: string }>>();
    const lastAttempt = async (jobId: string, activityId: string) => {
      if (!lastAttempts.has(jobId)) {
        const events = (await client.workflow.getHandle(jobId).fetchHistory()).events ?? [];
        const scheduled = new Map<string, string>();
        for (const e of events) {
          const a = e.activityTaskScheduledEventAttributes;
          if (a?.activityId) scheduled.set(String(e.eventId), a.activityId);
        }
        const attempts = new Map<string, { attempt: number; cause: string }>();
        for (const e of events) {
          const a = e.activityTaskStartedEventAttributes;
          const id = a ? scheduled.get(String(a.scheduledEventId)) : undefined;
          if (id && (a!.attempt ?? 1) >= (attempts.get(id)?.attempt ?? 0))
            attempts.set(id, { attempt: a!.attempt ?? 1, cause: a!.lastFailure?.message ?? '' });
        }
        lastAttempts.set(jobId, attempts);
      }
      return lastAttempts.get(jobId)!.get(activityId) ?? { attempt: 0, cause: '' };
    };
    // A step is listed as running until Temporal notices its attempt is gone (a killed worker's step until its
    // heartbeat timeout), so it may be in the snapshots of several kills: it counts once, for the earliest kill whose
    // process its failure blames (`blame`), else the earliest that saw it running.
    const sorted = [...kills].sort((a, b) => a.at - b.at);
    for (const k of sorted) Object.assign(k, { retriedJobs: 0, retriedSteps: 0, causes: [] });
    const counted = new Set<string>();
    const retriedJobs = new Map<KillRecord, Set<string>>();
    for (const k of sorted) {
      for (const step of k.running ?? []) {
        const id = `${step.jobId}/${step.activityId}/${step.attempt}`;
        if (counted.has(id)) continue;
        const last = await lastAttempt(step.jobId, step.activityId);
        if (last.attempt <= step.attempt) continue;
        counted.add(id);
        const seen = sorted.filter((x) => x.running?.some((r) => `${r.jobId}/${r.activityId}/${r.attempt}` === id));
        const to = seen.find((x) => blame(last.cause, x)) ?? seen[0];
        to.retriedSteps! += 1;
        to.causes!.push(`${step.type}: ${last.cause.slice(0, 120)}`);
        retriedJobs.set(to, (retriedJobs.get(to) ?? new Set()).add(step.jobId));
      }
    }
    for (const [k, jobs] of retriedJobs) k.retriedJobs = jobs.size;
  } finally {
    await connection.close();
  }
}

const secs = (from: number, to: number | undefined) =>
  to === undefined ? 'never' : `${((to - from) / 1000).toFixed(1)}`;

/** The figures as a table (plain lines, no runner-summary shape). */
export function figuresTable(title: string, t0: number, kills: KillRecord[]): string {
  const head = [
    'process killed',
    'doing at the kill',
    'killed at s',
    'served again after s',
    'health dropped',
    'replacement ready after s',
    'steps running',
    'jobs retried (steps)',
    'client retries',
  ];
  const rows = kills.map((k) => [
    `${k.process} (pid ${k.pid})`,
    k.doing,
    secs(t0, k.at),
    secs(k.at, k.servedAgain),
    k.healthDropped ? 'yes' : 'no',
    `${secs(k.at, k.replaced)}${k.replacedBy ? ` (${k.replacedBy})` : ''}`,
    String(k.running?.length ?? '?'),
    `${k.retriedJobs ?? '?'} (${k.retriedSteps ?? '?'})`,
    String(k.clientRetries ?? 0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `      | ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [
    `      ${title}`,
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    ...kills.flatMap((k) => (k.causes ?? []).map((c) => `      step retried after the ${k.process} kill: ${c}`)),
  ].join('\n');
}
