import { expect } from 'chai';
import type { BatchInput, BatchManifest } from '../../workflows/definitions';
import {
  BatchLedger,
  checkFailAllReason,
  childJobInput,
  MAX_FAIL_REASON,
  recordInput,
} from '../../workflows/batch-state';

// The batch workflow's counting, without Temporal: what its handlers and main loop do to a batch's jobs.

const T0 = '2026-01-01T00:00:00.000Z';

function input(over: Partial<BatchInput> = {}): BatchInput {
  return {
    batchId: 'batch-1',
    batchName: 'nightly',
    createdAt: T0,
    jobCount: 5,
    manifestKey: 'uploads/batch-1/manifest.json',
    window: 2,
    ...over,
  };
}

/** A ledger on a clock that moves one second per reading. */
function ledger(over: Partial<BatchInput> = {}) {
  let t = Date.parse(T0);
  const now = () => new Date((t += 1000)).toISOString();
  return new BatchLedger(input(over), now);
}

/** Starts the next slice as the main loop does; returns the indexes started. */
function startSlice(b: BatchLedger, limit = 50): number[] {
  const { offset, take } = b.nextSlice(limit);
  const started: number[] = [];
  for (let i = offset; i < offset + take; i++) if (b.markStarted(i, `job-${i}`)) started.push(i);
  return started;
}

describe('batch ledger (the batch workflow state, no Temporal)', () => {
  it('starts pending and active, with every job pending', () => {
    const s = ledger().state();
    expect(s).to.deep.include({
      batch_id: 'batch-1',
      batch_name: 'nightly',
      status: 'pending',
      active: true,
      created_at: T0,
      job_count: 5,
      completed_count: 0,
      failed_count: 0,
      processing_count: 0,
      pending_count: 5,
      statuses: 'ppppp',
    });
    expect(s).to.not.have.property('legacy');
    expect(ledger({ legacy: true }).state().legacy).to.equal(true);
  });

  it('starts jobs in manifest order within the window, and counts each end exactly once', () => {
    const b = ledger();
    expect(b.canStart()).to.equal(true);
    expect(startSlice(b)).to.deep.equal([0, 1]);
    expect(b.canStart(), 'window full').to.equal(false);
    expect(b.state()).to.deep.include({ status: 'processing', processing_count: 2, statuses: 'rrppp' });
    b.jobFinished({ index: 1, status: 'failed', run: 1 });
    b.jobFinished({ index: 1, status: 'failed', run: 1 });
    expect(b.state()).to.deep.include({ failed_count: 1, processing_count: 1 });
    expect(startSlice(b)).to.deep.equal([2]);
    b.jobFinished({ index: 0, status: 'completed' });
    b.jobFinished({ index: 2, status: 'completed' });
    expect(startSlice(b, 1), 'a slice is bounded by its limit').to.deep.equal([3]);
    expect(startSlice(b)).to.deep.equal([4]);
    expect(b.canStart(), 'nothing left to start').to.equal(false);
    expect(b.allDone()).to.equal(false);
    b.jobFinished({ index: 3, status: 'completed' });
    b.jobFinished({ index: 4, status: 'failed' });
    expect(b.allDone()).to.equal(true);
    expect(b.state()).to.deep.include({
      status: 'completed',
      completed_count: 3,
      failed_count: 2,
      pending_count: 0,
      statuses: 'cfccf',
    });
  });

  it('toggleActive pauses and resumes starting; with an argument it sets the flag, so a retry is harmless', () => {
    const b = ledger();
    b.toggle();
    expect(b.state().active).to.equal(false);
    expect(b.canStart()).to.equal(false);
    b.toggle(false);
    expect(b.state().active).to.equal(false);
    b.toggle(true);
    b.toggle(true);
    expect(b.canStart()).to.equal(true);
  });

  it('ignores reports of an older run than the newest it knows of a job, and reports past the manifest', () => {
    const b = ledger();
    startSlice(b);
    b.jobFinished({ index: 0, status: 'failed', run: 1 });
    b.jobRestarted({ index: 0, run: 2, jobId: 'job-0' });
    expect(b.state().statuses[0]).to.equal('r');
    b.jobFinished({ index: 0, status: 'failed', run: 1 }); // the replaced run's late report
    expect(b.state().statuses[0]).to.equal('r');
    b.jobFinished({ index: 0, status: 'completed', run: 2 });
    b.jobRestarted({ index: 0, run: 2, jobId: 'job-0' }); // the same run's hand-over retried after it finished
    expect(b.state().statuses[0]).to.equal('c');
    b.jobFinished({ index: 7, status: 'completed' });
    b.jobRestarted({ index: -1 });
    expect(b.state().statuses).to.equal('crppp');
    expect(b.restartedRuns()).to.deep.equal({ runs: { 0: 2 } });
    expect(ledger().restartedRuns()).to.deep.equal({});
  });

  it('fail-all fails every pending job, stops starting and names the running ones; with closesGaps it leaves the records to the main loop', () => {
    const b = ledger({ window: 3 });
    // Jobs 0 and 1 started; job 2 is in the slice being loaded (past `next`'s old value, still pending).
    const { offset, take } = b.nextSlice(3);
    expect([offset, take]).to.deep.equal([0, 3]);
    b.markStarted(0, 'job-0');
    b.markStarted(1, 'job-1');
    const step = b.failAll('operator stop', true);
    expect(step.neverStarted).to.deep.equal([2, 3, 4]);
    expect(step.toCancel).to.deep.equal([
      [0, 'job-0'],
      [1, 'job-1'],
    ]);
    expect(b.markStarted(2, 'job-2'), 'failed meanwhile: not started').to.equal(false);
    expect(b.canStart()).to.equal(false);
    expect(b.hasRecordsToFail()).to.equal(true);
    expect(b.takeRecordsToFail()).to.deep.equal({ indexes: [2, 3, 4], reason: 'operator stop' });
    expect(b.hasRecordsToFail()).to.equal(false);
    // Job 1 completes on its own before its failJob signal arrives; job 0 is still running.
    b.jobFinished({ index: 1, status: 'completed' });
    expect(b.ended(step.toCancel)).to.equal(false);
    expect(b.notCompleted(step.toCancel)).to.equal(1);
    b.jobFinished({ index: 0, status: 'failed' });
    expect(b.ended(step.toCancel)).to.equal(true);
    expect(b.allDone()).to.equal(true);
    expect(b.state()).to.deep.include({ failed_count: 4, completed_count: 1 });
  });

  it('fail-all of runs before closesGaps fails only the jobs past the next start and queues no records', () => {
    const b = ledger({ window: 3 });
    b.nextSlice(3);
    b.markStarted(0, 'job-0');
    const step = b.failAll('stop', false);
    expect(step.neverStarted).to.deep.equal([3, 4]);
    expect(step.toCancel).to.deep.equal([[0, 'job-0']]);
    expect(b.state().statuses).to.equal('rppff');
    expect(b.hasRecordsToFail()).to.equal(false);
  });

  it('carries its state over continue-as-new', () => {
    const b = ledger();
    startSlice(b);
    b.jobFinished({ index: 0, status: 'completed' });
    b.jobRestarted({ index: 0, run: 2, jobId: 'job-0' });
    b.toggle(false);
    const carry = b.carry();
    expect(carry).to.deep.equal({
      statuses: 'rrppp',
      next: 2,
      active: false,
      running: { 0: 'job-0', 1: 'job-1' },
      runs: { 0: 2 },
    });
    const next = new BatchLedger(input({ carry }), () => T0);
    const { updated_at: _a, ...was } = b.state();
    const { updated_at: _b, ...is } = next.state();
    void _a;
    void _b;
    expect(is).to.deep.equal(was);
    next.jobFinished({ index: 0, status: 'failed', run: 1 });
    expect(next.state().statuses[0], 'the carried run still makes run 1 stale').to.equal('r');
    next.toggle(true);
    expect(next.canStart(), 'the window is still full').to.equal(false);
    next.jobFinished({ index: 1, status: 'completed' });
    expect(startSlice(next)).to.deep.equal([2]);
  });

  it('marks each change with the time of the change', () => {
    const b = ledger();
    const first = b.state().updated_at;
    b.toggle();
    expect(b.state().updated_at > first).to.equal(true);
    const second = b.state().updated_at;
    b.jobFinished({ index: 9, status: 'completed' });
    expect(b.state().updated_at, 'an ignored report changes nothing').to.equal(second);
  });

  it('checks fail-all reasons, and builds a child job input and the record input', () => {
    expect(() => checkFailAllReason('')).to.throw(/1 to 1000/);
    expect(() => checkFailAllReason('x'.repeat(MAX_FAIL_REASON + 1))).to.throw(/1 to 1000/);
    expect(() => checkFailAllReason(undefined)).to.throw(/1 to 1000/);
    expect(() => checkFailAllReason('x'.repeat(MAX_FAIL_REASON))).to.not.throw();
    const spec: BatchManifest['jobs'][number] = {
      job_id: 'job-7',
      job_type: 'pdf',
      parameters: { file_key: 'uploads/a.pdf' },
      webhook: { url: 'https://example.com/hook', sealed: true },
    };
    expect(childJobInput(input({ userId: 'u-1', webhookRetryScale: 0.01 }), spec, 4)).to.deep.equal({
      jobId: 'job-7',
      jobType: 'pdf',
      parameters: { file_key: 'uploads/a.pdf' },
      batchId: 'batch-1',
      batchIndex: 4,
      createdAt: T0,
      run: 1,
      userId: 'u-1',
      webhook: { url: 'https://example.com/hook', sealed: true },
      webhookRetryScale: 0.01,
    });
    expect(childJobInput(input({ legacy: true }), { ...spec, webhook: undefined }, 0)).to.deep.equal({
      jobId: 'job-7',
      jobType: 'pdf',
      parameters: { file_key: 'uploads/a.pdf' },
      batchId: 'batch-1',
      batchIndex: 0,
      createdAt: T0,
      run: 1,
      legacy: true,
    });
    // A batch that counts its children by their close says so in their input.
    expect(childJobInput(input(), { ...spec, webhook: undefined }, 1, true)).to.deep.include({
      run: 1,
      reportsByCompletion: true,
    });
    expect(childJobInput(input(), spec, 1)).to.not.have.property('reportsByCompletion');
    expect(recordInput(input({ carry: { statuses: 'p', next: 0, active: true } }))).to.deep.equal(input());
  });
});
