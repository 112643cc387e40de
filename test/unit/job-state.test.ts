import { expect } from 'chai';
import type { JobInput, JobLog, JobRun, JobState } from '../../workflows/definitions';
import {
  addLog,
  complete,
  fail,
  initialState,
  isTerminal,
  logsForRestart,
  MAX_EVENTS,
  MAX_LOGS,
  reportProgress,
  startProcessing,
} from '../../workflows/job-state';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const T2 = '2026-01-01T00:00:02.000Z';

function input(over: Partial<JobRun> = {}): JobInput {
  return {
    jobId: 'job-00000000-0000-4000-8000-000000000001',
    jobType: 'transformer',
    parameters: { operation: 'html-to-markdown', html: '<p>x</p>' },
    createdAt: T0,
    run: 1,
    ...over,
  };
}

function processing(over: Partial<JobRun> = {}): JobState {
  const s = initialState(input(over), T0);
  startProcessing(s, T0);
  return s;
}

describe('job state transitions (pure, no Temporal)', () => {
  describe('initialState', () => {
    it('builds a pending job at 0 % with version 1, no results, no events and the input without prior logs', () => {
      const priorLogs: JobLog[] = [{ timestamp: T0, level: 'info', message: 'earlier run' }];
      const s = initialState(
        input({ userId: 'u-1', batchId: 'batch-1', batchIndex: 3, run: 2, priorLogs, priorEventId: 7, legacy: true }),
        T1,
      );
      expect(s).to.deep.include({
        job_id: 'job-00000000-0000-4000-8000-000000000001',
        job_type: 'transformer',
        status: 'pending',
        created_at: T0,
        updated_at: T1,
        user_id: 'u-1',
        batch_id: 'batch-1',
        results: null,
        events: [],
        version: 1,
        run: 2,
        legacy: true,
      });
      expect(s.progress).to.deep.equal({ step: 'queued', percent: 0, message: 'Waiting to be processed' });
      expect(s.parameters).to.deep.equal({ operation: 'html-to-markdown', html: '<p>x</p>' });
      expect(s.logs).to.deep.equal(priorLogs);
      expect(s.logs, 'a copy, not the input array').to.not.equal(priorLogs);
      expect(s.input).to.not.have.property('priorLogs');
      expect(s.input).to.include({ jobId: s.job_id, run: 2, priorEventId: 7, batchIndex: 3 });
      expect(s).to.not.have.property('error');
    });

    it('leaves out user, batch and legacy fields that the input does not carry', () => {
      const s = initialState(input(), T0);
      expect(s).to.not.have.any.keys('user_id', 'batch_id', 'legacy', 'error');
      expect(s.logs).to.deep.equal([]);
    });

    it('says why a job waits: accepted, or restarted (the API answers a restart with this state)', () => {
      expect(initialState(input(), T0).progress.message).to.equal('Waiting to be processed');
      const again = initialState(input({ run: 2 }), T1, 'Restarted; waiting to be processed');
      expect(again).to.deep.include({
        status: 'pending',
        run: 2,
        updated_at: T1,
        progress: { step: 'queued', percent: 0, message: 'Restarted; waiting to be processed' },
      });
    });
  });

  describe('startProcessing', () => {
    it('moves to processing at 1 % at least and bumps the version', () => {
      const s = initialState(input(), T0);
      startProcessing(s, T1);
      expect(s.status).to.equal('processing');
      expect(s.progress).to.deep.equal({ step: 'started', percent: 1, message: 'Processing started' });
      expect(s.version).to.equal(2);
      expect(s.updated_at).to.equal(T1);
    });
  });

  describe('reportProgress', () => {
    it('applies a higher percent, bumps the version and returns the event', () => {
      const s = processing();
      const v = s.version;
      const ev = reportProgress(s, 'ocr', 40.4, 'OCR page 4 of 10', T1);
      expect(s.progress).to.deep.equal({ step: 'ocr', percent: 40, message: 'OCR page 4 of 10' });
      expect(s.version).to.equal(v + 1);
      expect(s.updated_at).to.equal(T1);
      expect(ev).to.deep.equal({
        id: 1,
        phase: 'processing',
        progress: 40,
        message: 'OCR page 4 of 10',
        timestamp: T1,
      });
      expect(s.events).to.deep.equal([ev]);
    });

    it('never lets the percent go backwards', () => {
      const s = processing();
      reportProgress(s, 'ocr', 60, 'sixty', T1);
      const ev = reportProgress(s, 'ocr', 20, 'twenty', T2);
      expect(s.progress.percent).to.equal(60);
      expect(ev?.progress).to.equal(60);
      expect(s.progress.message).to.equal('twenty');
    });

    it('never reaches 100 while processing: 99 at most', () => {
      const s = processing();
      expect(reportProgress(s, 'x', 100, 'all', T1)?.progress).to.equal(99);
      expect(reportProgress(s, 'x', 250, 'more', T1)?.progress).to.equal(99);
      expect(s.progress.percent).to.equal(99);
      expect(s.status).to.equal('processing');
    });

    it('is ignored unless the job is processing', () => {
      const pending = initialState(input(), T0);
      const before = structuredClone(pending);
      expect(reportProgress(pending, 'x', 50, 'early', T1)).to.equal(null);
      expect(pending).to.deep.equal(before);

      const done = processing();
      complete(done, {}, T1);
      const doneBefore = structuredClone(done);
      expect(reportProgress(done, 'x', 50, 'late', T2)).to.equal(null);
      expect(done).to.deep.equal(doneBefore);

      const failed = processing();
      fail(failed, { code: 'X', message: 'broken', details: {} }, T1);
      expect(reportProgress(failed, 'x', 50, 'late', T2)).to.equal(null);
      expect(failed.status).to.equal('failed');
    });

    it('numbers events one after another, continuing from the prior run’s last event id', () => {
      const s = processing({ run: 2, priorEventId: 12 });
      const ids = [10, 20, 30].map((p) => reportProgress(s, 'x', p, `${p}`, T1, 12)!.id);
      const end = complete(s, {}, T2, 12);
      expect(ids).to.deep.equal([13, 14, 15]);
      expect(end.id).to.equal(16);
    });
  });

  describe('complete', () => {
    it('sets completed at 100 % with the results, drops any error and emits a completed event', () => {
      const s = processing();
      reportProgress(s, 'x', 70, 'seventy', T1);
      s.error = { code: 'OLD', message: 'stale', details: {} };
      const v = s.version;
      const ev = complete(s, { text: 'done' }, T2);
      expect(s.status).to.equal('completed');
      expect(s.results).to.deep.equal({ text: 'done' });
      expect(s.progress).to.deep.equal({ step: 'completed', percent: 100, message: 'Completed' });
      expect(s).to.not.have.property('error');
      expect(s.version).to.equal(v + 1);
      expect(ev).to.deep.equal({ id: 2, phase: 'completed', progress: 100, message: 'Job completed', timestamp: T2 });
      expect(isTerminal(s)).to.equal(true);
    });
  });

  describe('fail', () => {
    it('keeps the percent reached, records the error and emits a failed event that carries it', () => {
      const s = processing();
      reportProgress(s, 'ocr', 45, 'page 5', T1);
      const error = { code: 'OCR_FAILED', message: 'tesseract crashed', details: { page: 5 } };
      const v = s.version;
      const ev = fail(s, error, T2);
      expect(s.status).to.equal('failed');
      expect(s.error).to.deep.equal(error);
      expect(s.progress).to.deep.equal({ step: 'failed', percent: 45, message: 'tesseract crashed' });
      expect(s.results).to.equal(null);
      expect(s.version).to.equal(v + 1);
      expect(ev).to.deep.include({ id: 2, phase: 'failed', progress: 45, message: 'tesseract crashed', error });
      expect(isTerminal(s)).to.equal(true);
    });
  });

  describe('caps', () => {
    it('keeps at most MAX_LOGS log lines: the first ten and the newest', () => {
      const s = processing();
      for (let i = 0; i < MAX_LOGS + 50; i++) addLog(s, 'info', `line ${i}`, T1);
      expect(s.logs).to.have.length(MAX_LOGS);
      expect(s.logs.slice(0, 10).map((l) => l.message)).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => `line ${i}`),
      );
      expect(s.logs[10].message).to.equal('line 60');
      expect(s.logs[MAX_LOGS - 1].message).to.equal(`line ${MAX_LOGS + 49}`);
    });

    it('keeps at most MAX_EVENTS events, the newest, with ids still increasing', () => {
      const s = processing();
      for (let i = 0; i < MAX_EVENTS + 30; i++) reportProgress(s, 'x', 1, `e${i}`, T1);
      expect(s.events).to.have.length(MAX_EVENTS);
      expect(s.events[0].id).to.equal(31);
      expect(s.events[MAX_EVENTS - 1].id).to.equal(MAX_EVENTS + 30);
      const next = complete(s, {}, T2);
      expect(next.id).to.equal(MAX_EVENTS + 31);
      expect(s.events).to.have.length(MAX_EVENTS);
    });
  });

  describe('logsForRestart', () => {
    it('appends a “Job restarted” line and leaves the given logs untouched', () => {
      const logs: JobLog[] = [
        { timestamp: T0, level: 'info', message: 'Processing pdf job' },
        { timestamp: T1, level: 'error', message: 'Job failed: NOT_IMPLEMENTED: no pipeline' },
      ];
      const out = logsForRestart(logs, T2);
      expect(out).to.deep.equal([...logs, { timestamp: T2, level: 'info', message: 'Job restarted' }]);
      expect(logs).to.have.length(2);
    });
  });

  describe('isTerminal', () => {
    it('is true for completed and failed only', () => {
      expect(['pending', 'processing', 'completed', 'failed'].map((status) => isTerminal({ status }))).to.deep.equal([
        false,
        false,
        true,
        true,
      ]);
    });
  });
});
