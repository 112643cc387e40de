import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { healthOk, spawnService, waitForJobEnd, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { enginePids } from '../support/servers/proc-tree';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { speechCallLog } from '../support/media/speech-call-log';
import { speechRecording } from '../support/media/speech-recording';

// A 60-second recording in ~6 chunks of 10 s, transcribed one after another (MEDIA_CONCURRENCY=1); the worker is
// killed with SIGKILL once two chunks are kept. A new worker finishes the job, and no chunk kept before the kill goes
// to the engine again: every engine call is counted (test/support/media/speech-call-log.ts) with the chunk it transcribed.

const SECONDS = 60;

/** Chunk transcripts kept under the job, by file name (`<index>.json`) with their modification times. */
function keptChunks(dataDir: string, jobId: string): Map<string, number> {
  const dir = path.join(dataDir, 'blobs', 'objects', 'jobs', jobId, 'internal', 'chunks');
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) out.set(f, fs.statSync(path.join(dir, f)).mtimeMs);
  return out;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

const countBy = (xs: string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());

describe('Audio durability', function () {
  this.timeout(240_000);
  let temporal: DevServer | undefined;
  let dataDir = '';
  const procs: Proc[] = [];
  const engines: number[] = [];

  after(async () => {
    for (const p of procs) {
      engines.push(...enginePids(p.child.pid));
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
    engines.forEach(killQuietly);
    await temporal?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes a multi-chunk transcription after the worker is killed, without transcribing a kept chunk again', async () => {
    temporal = await startDevServer();
    dataDir = tempDir('docproc-audio-kill-');
    const file = await speechRecording(path.join(dataDir, 'input'), SECONDS);
    const counter = speechCallLog(dataDir);
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      TASK_QUEUE_PREFIX: `audiokill${port}`,
      AUDIO_CHUNK_SECONDS: '10',
      MEDIA_CONCURRENCY: '1',
      ...counter.env,
    };
    const url = `http://127.0.0.1:${port}`;
    let worker = spawnService('worker', env);
    const api = spawnService('api', env);
    procs.push(worker, api);
    await waitFor(() => healthOk(url), 'a healthy service', 120_000);

    const created = (await fetch(`${url}/api/jobs/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'audio',
        parameters: { filename: file, source_language: 'en', target_language: 'en', use_cache: false },
      }),
    }).then((r) => r.json())) as any;
    const jobId = created.data.job_id as string;

    await waitFor(
      async () => (keptChunks(dataDir, jobId).size >= 2 ? true : undefined),
      'two chunks kept',
      150_000,
      100,
    );
    engines.push(...enginePids(worker.child.pid));
    worker.child.kill('SIGKILL');
    await worker.ended;
    // The orphaned engine would finish its chunk and exit on its closed stdin; it goes now, as in a killed container.
    engines.forEach(killQuietly);
    const before = keptChunks(dataDir, jobId);
    const callsBefore = counter.calls().length;

    worker = spawnService('worker', env);
    procs.push(worker);
    const job = await waitForJobEnd(url, jobId, 150_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.original_text).to.match(/train to Berlin/i);

    const after = keptChunks(dataDir, jobId);
    const chunks = after.size;
    expect(chunks, 'chunks of a 60 s recording at AUDIO_CHUNK_SECONDS=10').to.be.within(5, 7);
    expect(before.size, 'the kill came before the last chunk').to.be.lessThan(chunks);
    for (const [f, mtime] of before) expect(after.get(f), `chunk ${f} rewritten`).to.equal(mtime);

    // One engine call per chunk; the chunk in flight at the kill (at most one: one media slot) may have gone twice.
    const calls = countBy(counter.calls());
    const summary = JSON.stringify([...calls]);
    for (let i = 0; i < chunks; i++)
      expect(calls.get(`chunk-${i}.wav`) ?? 0, `engine calls for chunk ${i}: ${summary}`).to.be.at.least(1);
    for (const f of before.keys())
      expect(
        calls.get(`chunk-${f.replace(/\.json$/, '')}.wav`),
        `kept chunk ${f} went to the engine again: ${summary}`,
      ).to.equal(1);
    expect(
      [...calls.keys()].every((k) => /^chunk-\d+\.wav$/.test(k)),
      summary,
    ).to.equal(true);
    expect(counter.calls().length, summary).to.be.at.most(chunks + 1);
    expect(callsBefore, 'calls before the kill').to.be.at.least(before.size);
  });
});
