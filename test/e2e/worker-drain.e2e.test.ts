import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../scripts/services.mjs';
import { runningSteps, type RunningStep } from '../support/chaos/chaos-figures';
import { workerReady } from '../support/servers/cluster';
import { healthOk, spawnService, waitForJobEnd, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { enginePids } from '../support/servers/proc-tree';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { speechRecording } from '../support/media/speech-recording';
import { speechTrace, type SpeechEvent, type SpeechTrace } from '../support/media/speech-trace';
import { alive, killPid, parentOf } from '../support/servers/stack-procs';

// Issue #22: a worker stopped with SIGTERM while a step runs (a deploy, `npm start` stopping) drains: it stops
// polling, lets the running step finish within WORKER_SHUTDOWN_GRACE_MS, or, past it, cancels the step, whose attempt
// then goes to the next worker. Either way nothing is lost: the job completes, once. The step is a chunk of a
// recording being transcribed (one media slot, chunks one after another), seen running in the speech engine's trace.

const SECONDS = 40;

describe('a worker stopped with SIGTERM while a step runs', function () {
  this.timeout(300_000);
  let temporal: DevServer;
  let dataDir: string;
  let trace: SpeechTrace;
  let recording: string;
  let env: Record<string, string>;
  let url: string;
  const procs: Proc[] = [];

  before(async function () {
    this.timeout(180_000);
    temporal = await startDevServer();
    dataDir = tempDir('docproc-drain-');
    trace = speechTrace(dataDir);
    recording = await speechRecording(path.join(dataDir, 'in'), SECONDS);
    const port = await freePort();
    env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      TASK_QUEUE_PREFIX: `drain${port}`,
      AUDIO_CHUNK_SECONDS: '10',
      MEDIA_CONCURRENCY: '1',
      ...trace.env,
    };
    url = `http://127.0.0.1:${port}`;
    procs.push(spawnService('api', env));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed')
      for (const p of procs)
        console.log(`--- ${p.child.spawnargs.at(-1)} (pid ${p.child.pid}) ---\n${p.output().slice(-3000)}`);
  });

  after(async () => {
    for (const p of procs) {
      enginePids(p.child.pid).forEach((pid) => killPid(pid));
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
    await temporal?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A worker (with `grace`), an audio job, and the moment one of its chunks is being transcribed. */
  async function midChunk(
    grace: number,
  ): Promise<{ worker: Proc; jobId: string; call: SpeechEvent; step: RunningStep }> {
    const worker = spawnService('worker', { ...env, WORKER_SHUTDOWN_GRACE_MS: String(grace) });
    procs.push(worker);
    await workerReady(worker);
    await waitFor(() => healthOk(url), 'a healthy service', 120_000);
    const created = (await fetch(`${url}/api/jobs/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'audio',
        parameters: { filename: recording, source_language: 'en', target_language: 'en', use_cache: false },
      }),
    }).then((r) => r.json())) as any;
    const jobId = created.data.job_id as string;
    // The second chunk, so that the step is one of several and a new worker has chunks of its own to do.
    for (;;) {
      const call = await waitFor(
        async () =>
          trace.open().find((e) => e.file === 'chunk-1.wav' && alive(e.pid) && parentOf(e.pid) === worker.child.pid),
        'the worker transcribing a chunk',
        180_000,
        25,
      );
      const [step] = (await runningSteps(temporal.address, [jobId])).filter((s) => s.type === 'transcribeChunk');
      if (step && trace.open().some((e) => e.pid === call.pid && e.t === call.t)) return { worker, jobId, call, step };
    }
  }

  /** The job's last attempt of `step`'s activity: its number and the worker identity that started it. */
  async function lastAttempt(jobId: string, step: RunningStep): Promise<{ attempt: number; identity: string }> {
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const events = (await new Client({ connection }).workflow.getHandle(jobId).fetchHistory()).events ?? [];
      const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === step.activityId);
      const started = events.find(
        (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
      )!.activityTaskStartedEventAttributes!;
      return { attempt: started.attempt ?? 1, identity: started.identity ?? '' };
    } finally {
      await connection.close();
    }
  }

  /** The job completed once, with the recording's words, every chunk kept; answers the chunk transcriptions per chunk. */
  async function completedOnce(jobId: string, from: number): Promise<Map<string, number>> {
    const job = await waitForJobEnd(url, jobId, 180_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.original_text).to.match(/train to Berlin/i);
    expect(job.logs.filter((l: { message: string }) => l.message === 'Job completed')).to.have.length(1);
    const chunks = fs.readdirSync(path.join(dataDir, 'blobs', 'objects', 'jobs', jobId, 'internal', 'chunks'));
    expect(chunks.filter((f) => f.endsWith('.json')).length, 'chunks kept').to.be.within(3, 5);
    const calls = new Map<string, number>();
    for (const e of trace.events())
      if (e.phase === 'start' && e.t >= from) calls.set(e.file, (calls.get(e.file) ?? 0) + 1);
    return calls;
  }

  it('lets the running step finish within the grace, exits 0, and the next worker completes the job once', async () => {
    const from = Date.now() / 1000;
    const { worker, jobId, call, step } = await midChunk(120_000);
    worker.child.kill('SIGTERM');
    expect(await worker.ended, 'the worker exits by itself, cleanly').to.equal(0);
    // The chunk in flight was transcribed to its end by the stopping worker's engine, and no engine is left.
    expect(trace.events().some((e) => e.pid === call.pid && e.phase === 'end' && e.t >= call.t)).to.equal(true);
    expect(alive(call.pid), 'its engine stopped with it').to.equal(false);

    const next = spawnService('worker', env);
    procs.push(next);
    const calls = await completedOnce(jobId, from);
    const last = await lastAttempt(jobId, step);
    expect(last, 'the step finished in its first attempt, by the stopping worker').to.deep.include({
      attempt: step.attempt,
    });
    expect(last.identity.startsWith(`${worker.child.pid}@`), last.identity).to.equal(true);
    for (const [file, n] of calls) expect(n, `transcriptions of ${file}`).to.equal(1);
    next.child.kill('SIGTERM');
    expect(await next.ended).to.equal(0);
  });

  it('hands a step that outlasts the grace over to the next worker, and the job completes once', async () => {
    const from = Date.now() / 1000;
    const { worker, jobId, call, step } = await midChunk(0);
    worker.child.kill('SIGTERM');
    expect(await worker.ended, 'the worker exits by itself, cleanly').to.equal(0);
    // The step was cancelled: its engine was stopped before it finished the chunk.
    expect(trace.events().some((e) => e.pid === call.pid && e.phase === 'end' && e.t >= call.t)).to.equal(false);
    expect(alive(call.pid), 'its engine stopped').to.equal(false);

    const next = spawnService('worker', env);
    procs.push(next);
    const calls = await completedOnce(jobId, from);
    const last = await lastAttempt(jobId, step);
    expect(last.attempt, 'the step ran again').to.be.greaterThan(step.attempt);
    expect(last.identity.startsWith(`${next.child.pid}@`), `handed over to the next worker: ${last.identity}`).to.equal(
      true,
    );
    // Only the chunk cut short was transcribed twice.
    expect(Object.fromEntries(calls)).to.include({ [call.file]: 2 });
    for (const [file, n] of calls) if (file !== call.file) expect(n, `transcriptions of ${file}`).to.equal(1);
    next.child.kill('SIGTERM');
    expect(await next.ended).to.equal(0);
  });
});
