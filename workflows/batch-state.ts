import {
  jobInput,
  STATUS_CODE,
  type BatchCarry,
  type BatchInput,
  type BatchManifest,
  type BatchClosedStatus,
  type BatchState,
  type JobInput,
  type JobStatus,
} from './definitions';

/** The longest reason fail-all takes. */
export const MAX_FAIL_REASON = 1000;

/**
 * Throws unless `reason` is a fail-all reason (the update's validator: a refused update leaves no trace in history).
 */
export function checkFailAllReason(reason: unknown): void {
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_FAIL_REASON) {
    throw new Error(`fail-all needs a reason of 1 to ${MAX_FAIL_REASON} characters`);
  }
}

/** What fail-all did at once: the jobs it failed before they started, and the running ones it must signal. */
export interface FailAllStep {
  neverStarted: number[];
  /** Manifest index and job id of each job running when fail-all arrived. */
  toCancel: [number, string][];
}

/**
 * A batch's jobs as its workflow counts them: one status per job in manifest order, the jobs running now (fail-all
 * signals them), the newest run of each restarted job (so a replaced run's late report is ignored), where the next
 * start begins, whether starting is paused, and the never-started jobs fail-all failed whose records are still to be
 * written. Plain state and its transitions, carried over continue-as-new by `carry()`: the workflow only wires it to
 * its handlers, its main loop and its activities, the way the Temporal samples' message-passing workflows keep theirs.
 * Counts stay exact because every job's end is reported once per run of it: by its close (a child of the current
 * batch run) or by `jobFinished` (a restarted run, or a run of a batch recorded before it counted closes).
 */
export class BatchLedger {
  /** The number of jobs in the batch. */
  readonly size: number;
  private readonly statuses: string[];
  private readonly running: Map<number, string>;
  private readonly runs: Map<number, number>;
  private readonly recordsToFail: number[] = [];
  /** Records of never-started jobs taken to be written as failed, not yet written (`recordsWritten`). */
  private writingRecords = 0;
  private failReason = '';
  private next: number;
  private active: boolean;
  private updatedAt: string;

  constructor(
    private readonly input: BatchInput,
    private readonly now: () => string,
  ) {
    const carry = input.carry;
    this.size = input.jobCount;
    this.statuses = (carry?.statuses ?? STATUS_CODE.pending.repeat(this.size)).split('');
    this.running = new Map(Object.entries(carry?.running ?? {}).map(([k, v]) => [Number(k), v]));
    this.runs = new Map(Object.entries(carry?.runs ?? {}).map(([k, v]) => [Number(k), v]));
    this.next = carry?.next ?? 0;
    this.active = carry?.active ?? true;
    this.updatedAt = now();
  }

  /** Marks a change (`updated_at`). */
  touch(): void {
    this.updatedAt = this.now();
  }

  private count(code: string): number {
    return this.statuses.reduce((a, s) => a + (s === code ? 1 : 0), 0);
  }

  /** What the `batchState` query answers and the batch's record holds. */
  state(): BatchState {
    const n = this.size;
    const completed = this.count(STATUS_CODE.completed);
    const failed = this.count(STATUS_CODE.failed);
    const processing = this.count(STATUS_CODE.processing);
    const pending = this.count(STATUS_CODE.pending);
    return {
      batch_id: this.input.batchId,
      batch_name: this.input.batchName,
      // Completed once every job is terminal in its record too: the records fail-all failed are written first.
      status:
        completed + failed === n && this.recordsToFail.length + this.writingRecords === 0
          ? 'completed'
          : pending === n
            ? 'pending'
            : 'processing',
      active: this.active,
      created_at: this.input.createdAt,
      updated_at: this.updatedAt,
      job_count: n,
      completed_count: completed,
      failed_count: failed,
      processing_count: processing,
      pending_count: pending,
      statuses: this.statuses.join(''),
      ...(this.input.legacy ? { legacy: true } : {}),
    };
  }

  /** No job is pending or running. */
  allDone(): boolean {
    return this.count(STATUS_CODE.pending) === 0 && this.count(STATUS_CODE.processing) === 0;
  }

  /** Starting is on, a job is left to start, and the window has room. */
  canStart(): boolean {
    return this.active && this.next < this.size && this.running.size < this.input.window;
  }

  /** `toggleActive`: sets the flag, or flips it without an argument. */
  toggle(active?: boolean): void {
    this.active = typeof active === 'boolean' ? active : !this.active;
    this.touch();
  }

  /** A report of run `run` of job `index` is stale when the batch already knows a newer run of that job. */
  private ignored(index: number, run: number | undefined): boolean {
    return index < 0 || index >= this.size || (run !== undefined && run < (this.runs.get(index) ?? 1));
  }

  /** `jobFinished`: run `run` of job `index` ended. */
  jobFinished({ index, status, run }: { index: number; status: JobStatus; run?: number }): void {
    if (this.ignored(index, run)) return;
    this.statuses[index] = status === 'completed' ? STATUS_CODE.completed : STATUS_CODE.failed;
    this.running.delete(index);
    this.touch();
  }

  /** `jobRestarted`: run `run` of job `index` (workflow `jobId`) runs again. */
  jobRestarted({ index, run, jobId }: { index: number; run?: number; jobId?: string }): void {
    if (this.ignored(index, run)) return;
    if (run !== undefined) {
      // The same run reported twice (a retried hand-over) changes nothing once it has finished.
      if (run === (this.runs.get(index) ?? 1) && this.statuses[index] !== STATUS_CODE.processing) return;
      this.runs.set(index, run);
    }
    this.statuses[index] = STATUS_CODE.processing;
    if (jobId) this.running.set(index, jobId);
    this.touch();
  }

  /**
   * fail-all's immediate part: every job not yet started fails, nothing more starts, and the running jobs are
   * returned to be signalled. `closesGaps` (`patched('fail-all-closes-gaps')`): every pending job fails, those of a
   * slice being loaded included, and their records are left to the main loop (`takeRecordsToFail`); before, only
   * the jobs past `next`, and the update wrote their records itself.
   */
  failAll(reason: string, closesGaps: boolean): FailAllStep {
    const neverStarted: number[] = [];
    for (let i = closesGaps ? 0 : this.next; i < this.size; i++)
      if (this.statuses[i] === STATUS_CODE.pending) neverStarted.push(i);
    for (const i of neverStarted) this.statuses[i] = STATUS_CODE.failed;
    this.next = this.size;
    const toCancel = [...this.running.entries()];
    this.touch();
    if (closesGaps) {
      this.recordsToFail.push(...neverStarted);
      this.failReason = reason;
    }
    return { neverStarted, toCancel };
  }

  /**
   * Job `index`, counted as running, turned out never to have started (its start was in flight when the batch's run
   * closed): it fails like the jobs fail-all failed before they started, its record written by the main loop.
   */
  neverStarted(index: number, reason: string): void {
    if (this.statuses[index] !== STATUS_CODE.processing) return;
    this.statuses[index] = STATUS_CODE.failed;
    this.running.delete(index);
    this.recordsToFail.push(index);
    this.failReason ||= reason;
    this.touch();
  }

  /** None of `jobs` runs any more (each has reported its end). */
  ended(jobs: FailAllStep['toCancel']): boolean {
    return jobs.every(([i]) => this.statuses[i] !== STATUS_CODE.processing);
  }

  /** How many of `jobs` did not complete: failed, or still running with their failJob signal. */
  notCompleted(jobs: FailAllStep['toCancel']): number {
    return jobs.filter(([i]) => this.statuses[i] !== STATUS_CODE.completed).length;
  }

  /** There are records of never-started jobs to write as failed. */
  hasRecordsToFail(): boolean {
    return this.recordsToFail.length > 0;
  }

  /** The records of never-started jobs to write as failed, and the reason; taken once. */
  takeRecordsToFail(): { indexes: number[]; reason: string } {
    const indexes = this.recordsToFail.splice(0);
    this.writingRecords += indexes.length;
    return { indexes, reason: this.failReason };
  }

  /** The records last taken by `takeRecordsToFail` are written. */
  recordsWritten(): void {
    this.writingRecords = 0;
    this.touch();
  }

  /** The next slice of the manifest to start: at most `limit` jobs, within the window. Moves `next` past it. */
  nextSlice(limit: number): { offset: number; take: number } {
    const take = Math.min(this.input.window - this.running.size, this.size - this.next, limit);
    const offset = this.next;
    this.next += take;
    return { offset, take };
  }

  /** Job `index` (workflow `jobId`) is being started; false when fail-all failed it meanwhile. */
  markStarted(index: number, jobId: string): boolean {
    if (this.statuses[index] !== STATUS_CODE.pending) return false;
    this.statuses[index] = STATUS_CODE.processing;
    this.running.set(index, jobId);
    return true;
  }

  /** The runs of restarted jobs, for the batch's record (absent when no job was restarted). */
  restartedRuns(): { runs?: Record<number, number> } {
    return this.runs.size ? { runs: Object.fromEntries(this.runs) } : {};
  }

  /** The state the next run of the batch continues from (continue-as-new). */
  carry(): BatchCarry {
    return {
      statuses: this.statuses.join(''),
      next: this.next,
      active: this.active,
      running: Object.fromEntries(this.running),
      ...this.restartedRuns(),
    };
  }
}

/**
 * The input of job `index` of the batch, its first run; `reportsByCompletion` when the batch counts it by its close.
 */
export function childJobInput(
  input: BatchInput,
  spec: BatchManifest['jobs'][number],
  index: number,
  reportsByCompletion = false,
): JobInput {
  return jobInput(spec.job_type, spec.parameters, {
    jobId: spec.job_id,
    batchId: input.batchId,
    batchIndex: index,
    createdAt: input.createdAt,
    run: 1,
    ...(input.userId ? { userId: input.userId } : {}),
    ...(spec.webhook ? { webhook: spec.webhook } : {}),
    ...(input.legacy ? { legacy: true } : {}),
    ...(input.webhookRetryScale !== undefined ? { webhookRetryScale: input.webhookRetryScale } : {}),
    ...(reportsByCompletion ? { reportsByCompletion: true } : {}),
  });
}

/**
 * The batch's input as its record keeps it: without the state carried over continue-as-new, nor a closeout's mark
 * (a batch reopened from its record by a restarted job runs as a batch, not as a closeout).
 */
export function recordInput(input: BatchInput): Omit<BatchInput, 'carry'> {
  const { carry: _carry, closing: _closing, ...rest } = input;
  void _carry;
  void _closing;
  return rest;
}

const ENDED_BY: Record<BatchClosedStatus, string> = {
  TERMINATED: 'The batch was terminated (by an operator or a deployment)',
  CANCELLED: 'The batch was cancelled',
  TIMED_OUT: 'The batch ran past its workflow timeout',
  FAILED: 'The batch failed on an internal error',
};

/** The reason a batch's closeout fails its unfinished jobs with (their error's message, code CANCELLED). */
export function closingReason(status: BatchClosedStatus): string {
  return `${ENDED_BY[status] ?? 'The batch ended'} before this job finished; restart the job to run it again.`;
}
