import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityOptions } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import { heartbeating } from '../../activities/job-steps';
import { jobInternalKey } from '../../core/stores/records';
import * as presets from '../../workflows/activity-options';
import { childProcesses, noisePng, processExists, realActivities } from '../support/workflows/activity-env';
import { until } from '../support/jobs';
import { startOcrServer } from '../support/servers/ocr-server';
import { quietRuntime } from '../support/workflows/worker';

// Activities in the SDK's MockActivityEnvironment (a real activity Context: heartbeats are its events, cancel()
// aborts the activity's cancellation signal), built by createActivities over a real local blob store, with the
// real engines they spawn.

/** Every preset of workflows/activity-options.ts that sets a heartbeat timeout, in milliseconds by name. */
const heartbeatTimeouts = Object.entries(presets as Record<string, ActivityOptions>)
  .filter(([, o]) => o.heartbeatTimeout !== undefined)
  .map(([name, o]) => ({ name, ms: msToNumber(o.heartbeatTimeout!) }));

/** Work off the event loop for `ms`, stopped by its signal (as an engine process is). */
const waitWork = (ms: number) => (signal: AbortSignal) =>
  new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => resolve('done'), ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

describe('activities in MockActivityEnvironment', function () {
  this.timeout(60_000);
  before(() => quietRuntime());

  it('heartbeating() beats well inside the smallest heartbeat timeout of the presets', async () => {
    expect(heartbeatTimeouts.map((t) => t.name)).to.include.members(['quickTransform', 'cpuBound']);
    const env = new MockActivityEnvironment({ activityType: 'cadence' });
    const beats: number[] = [];
    env.on('heartbeat', () => beats.push(Date.now()));
    const started = Date.now();
    const value = await env.run(() => heartbeating(waitWork(3500)));
    const ended = Date.now();
    expect(value).to.equal('done');
    // A 3.5 s step with one beat a second: beats at about 1, 2 and 3 s; under load at least two of them.
    expect(beats.length).to.be.at.least(2);
    const marks = [started, ...beats, ended];
    const maxGap = Math.max(...marks.slice(1).map((t, i) => t - marks[i]));
    const smallest = Math.min(...heartbeatTimeouts.map((t) => t.ms));
    expect(maxGap).to.be.below(smallest);
    // The cadence the helper is built on (one beat a second, the gaps observed here) fits every preset three times.
    const interval = Math.max(1000, maxGap);
    for (const t of heartbeatTimeouts) expect(t.ms, `${t.name} heartbeatTimeout`).to.be.at.least(3 * interval);
    // No beat after the step ended: the interval is cleared.
    const count = beats.length;
    await new Promise((r) => setTimeout(r, 1100));
    expect(beats.length).to.equal(count);
  });

  it("heartbeating() hands the work the activity's cancellation signal and stops beating on cancel", async () => {
    const env = new MockActivityEnvironment({ activityType: 'cancelled-step' });
    let beats = 0;
    env.on('heartbeat', () => {
      if (++beats === 1) env.cancel();
    });
    const err = await env
      .run(() => heartbeating(waitWork(60_000)))
      .then(
        () => 'resolved',
        (e: unknown) => e,
      );
    expect(err).to.be.instanceOf(CancelledFailure);
    expect(beats).to.equal(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect(beats).to.equal(1);
  });

  it('the external OCR step heartbeats every second while the service takes its time (under a 30 s heartbeat timeout)', async () => {
    expect(msToNumber(presets.longProviderCall.heartbeatTimeout!)).to.equal(30_000);
    const server = await startOcrServer();
    const { activities, store, remove } = await realActivities({ EXTERNAL_OCR_URL: server.url });
    try {
      const pdf = fs.readFileSync(path.resolve('samples/sample.pdf'));
      const ref = await store.put('uploads/slow-ocr.pdf', pdf, { mime: 'application/pdf' });
      // The service answers after 3.5 s: before the fix the step sent no heartbeat until the answer came (it ran
      // under a 10 min heartbeat timeout; a request may take EXTERNAL_OCR_TIMEOUT_MS, up to an hour).
      server.latency(3500);
      const env = new MockActivityEnvironment({ activityType: 'externalOcrPdf' });
      const beats: unknown[] = [];
      env.on('heartbeat', (d: unknown) => void beats.push(d));
      const r = await env.run(activities.externalOcrPdf, {
        jobId: 'job-slow-ocr',
        inputKey: ref.key,
        sha256: ref.sha256,
        pages: [1],
        pageCount: 1,
        includeImages: false,
      });
      expect(r).to.include({ pages: 1, fromCache: false });
      expect(server.ocrRequests()).to.have.length(1);
      // Beats at about 1, 2 and 3 s while the request waits (under load at least two), then the pages done.
      const periodic = beats.filter((d) => d === undefined);
      expect(periodic.length, 'heartbeats while the service worked').to.be.at.least(2);
      expect(beats).to.deep.include({ done: 1, total: 1 });
    } finally {
      await server.close();
      await remove();
    }
  });

  it('a cancelled image OCR kills its tesseract process and rejects with a CancelledFailure', async () => {
    const { activities, store, remove } = await realActivities();
    const jobId = 'job-cancel-ocr';
    // Pixel noise: tesseract needs many seconds for an image this size, so the cancel finds it running.
    const ref = await store.put('uploads/noise.png', noisePng(6000, 6000), { mime: 'image/png' });
    const env = new MockActivityEnvironment({ activityType: 'ocrImageBlob' });
    const run = env.run(activities.ocrImageBlob, { jobId, key: ref.key, sha256: ref.sha256, languages: 'en' });
    const outcome = run.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    try {
      const [pid] = await until(
        async () => {
          const found = childProcesses(new RegExp(`^tesseract .*${ref.sha256}\\.img stdout`));
          return found.length ? found : undefined;
        },
        'tesseract to run',
        30_000,
        20,
      );
      expect(processExists(pid)).to.equal(true);
      env.cancel();
      const err = await outcome;
      expect(err).to.be.instanceOf(CancelledFailure);
      // runTool settles once the killed process is reaped: it is gone, and the step wrote nothing.
      expect(processExists(pid), `tesseract ${pid} still exists`).to.equal(false);
      expect(childProcesses(/^tesseract /)).to.deep.equal([]);
      expect(await store.stat(jobInternalKey(jobId, 'ocr.json'))).to.equal(null);
    } finally {
      env.cancel();
      await outcome;
      await remove();
    }
  });
});
