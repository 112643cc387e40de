import { expect } from 'chai';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import type { JobInput } from '../../workflows/definitions';
import { JobRun, toJobError } from '../../workflows/job-state';

// The job workflow's state, without Temporal: what its handlers, its pipeline context and its wrap-up do to a run.

const T0 = '2026-01-01T00:00:00.000Z';

function input(over: Partial<JobInput> = {}): JobInput {
  return {
    jobId: 'job-00000000-0000-4000-8000-000000000001',
    jobType: 'transformer',
    parameters: { operation: 'html-to-markdown', html: '<p>x</p>' },
    createdAt: T0,
    run: 1,
    ...over,
  } as JobInput;
}

/** A run on a clock that moves one second per reading. */
function run(over: Partial<JobInput> = {}): JobRun {
  let t = Date.parse(T0);
  return new JobRun(input(over), () => new Date((t += 1000)).toISOString());
}

/** How `result()` ends the run: its value, or what it throws. */
function ending(job: JobRun): { status?: string; thrown?: unknown } {
  try {
    return job.result();
  } catch (thrown) {
    return { thrown };
  }
}

const activityFailure = (cause: Error) =>
  new ActivityFailure('activity failed', 'extractPdfPages', '7', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);

describe('job run (the job workflow state, no Temporal)', () => {
  it('starts processing; a restarted run says which run it is, after the earlier runs logs', () => {
    const job = run({ run: 2, priorLogs: [{ timestamp: T0, level: 'info', message: 'Job restarted' }] });
    expect(job.state.status).to.equal('pending');
    job.start();
    expect(job.state.status).to.equal('processing');
    expect(job.state.logs.map((l) => l.message)).to.deep.equal([
      'Job restarted',
      'Run 2 started',
      'Processing transformer job',
    ]);
    const first = run();
    first.start();
    expect(first.state.logs.map((l) => l.message)).to.deep.equal(['Processing transformer job']);
  });

  it('turns progress into events numbered after the earlier runs events, never backwards', () => {
    const job = run({ priorEventId: 41 });
    expect(job.progress('pages', 10, 'early'), 'not processing yet').to.equal(null);
    job.start();
    expect(job.progress('pages', 30, 'a third')).to.include({ id: 42, progress: 30, phase: 'processing' });
    expect(job.progress('pages', 20, 'late report')).to.include({ id: 43, progress: 30 });
    expect(job.state.progress).to.deep.equal({ step: 'pages', percent: 30, message: 'late report' });
  });

  it('completes on a copy that becomes the live state, the same object, only when committed', () => {
    const job = run();
    job.start();
    const live = job.state;
    job.settle({ results: { markdown: '# x' } });
    const final = job.final();
    expect(final.event).to.include({ phase: 'completed', progress: 100, message: 'Job completed' });
    expect(final.state.status).to.equal('completed');
    expect(job.state.status, 'not before the record is written').to.equal('processing');
    job.commit(final.state);
    expect(job.state).to.equal(live);
    expect(job.state).to.deep.include({ status: 'completed', results: { markdown: '# x' } });
    expect(job.state.logs.at(-1)!.message).to.equal('Job completed');
    expect(ending(job)).to.deep.equal({ status: 'completed' });
  });

  it('failJob: the first request while running cancels it, with its reason, even when the pipeline then succeeds', () => {
    const job = run();
    job.start();
    expect(job.requestFail('operator stop')).to.equal(true);
    expect(job.requestFail('again')).to.equal(false);
    job.settle({ results: { done: true } });
    const final = job.final();
    expect(final.state.error).to.deep.equal({ code: 'CANCELLED', message: 'operator stop', details: {} });
    expect(final.event).to.include({ phase: 'failed' });
    job.commit(final.state);
    expect(job.state.logs.at(-1)!.message).to.equal('Job failed: CANCELLED: operator stop');
    expect(job.requestFail('after the end'), 'a finished job is not failed').to.equal(false);
    const { thrown } = ending(job);
    expect(thrown).to.be.instanceOf(ApplicationFailure);
    expect(thrown).to.include({ type: 'CANCELLED', nonRetryable: true, message: 'operator stop' });
  });

  it('a cancel from outside fails the job as cancelled, then ends the run as cancelled', () => {
    const job = run();
    job.start();
    const cancel = new CancelledFailure('cancelled');
    job.settle({ error: cancel });
    const final = job.final();
    expect(final.state.error!.code).to.equal('CANCELLED');
    expect(final.state.error!.message).to.match(/cancel request from an operator/);
    job.commit(final.state);
    expect(ending(job).thrown).to.equal(cancel);
  });

  it('a failJob cancel ends the run as a failed job, not as cancelled', () => {
    const job = run();
    job.start();
    job.requestFail('stop');
    job.settle({ error: activityFailure(new CancelledFailure('cancelled')) });
    job.commit(job.final().state);
    const { thrown } = ending(job);
    expect(thrown).to.be.instanceOf(ApplicationFailure);
    expect(thrown).to.include({ type: 'CANCELLED', message: 'stop' });
  });

  it('a failed step fails the job with the code its application failure carries', () => {
    const job = run();
    job.start();
    job.settle({
      error: activityFailure(ApplicationFailure.nonRetryable('Not a PDF', 'INVALID_FORMAT', { page: 3 })),
    });
    const final = job.final();
    expect(final.state.error).to.deep.equal({ code: 'INVALID_FORMAT', message: 'Not a PDF', details: { page: 3 } });
    expect(final.event).to.include({ phase: 'failed', message: 'Not a PDF' });
    job.commit(final.state);
    expect(ending(job).thrown).to.include({ type: 'INVALID_FORMAT', nonRetryable: true });
  });

  it('an error that is not one of ours is an internal error that does not repeat its message', () => {
    expect(
      toJobError(activityFailure(ApplicationFailure.create({ message: '/srv/x', type: 'Error' })), undefined),
    ).to.deep.equal({
      code: 'INTERNAL_ERROR',
      message: 'The job failed on an unexpected internal error.',
      details: { error_type: 'Error' },
    });
    expect(toJobError(new TypeError('/srv/y'), undefined)).to.deep.equal({
      code: 'INTERNAL_ERROR',
      message: 'The job failed on an unexpected internal error.',
      details: { error_type: 'TypeError' },
    });
  });

  it('knows whether it is one of a batch', () => {
    expect(run().inBatch).to.equal(false);
    expect(run({ batchId: 'batch-1' }).inBatch).to.equal(false);
    expect(run({ batchId: 'batch-1', batchIndex: 0 }).inBatch).to.equal(true);
  });
});
