import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { llmEnv, LLM_KEY } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { healthOk, spawnService, waitForJobEnd, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { startSessionSite, type SessionSite } from '../support/servers/session-site';

// A session job with an attachments page is held at its template step (the LLM test server does not answer), and the
// worker is killed with SIGKILL. A new worker finishes the job, and no finished step runs again: the site counts
// every download (page, attachments page, PDF), the steps kept under the job keep their files, and the PDF child job
// keeps its record.

/** The steps kept under the job, by file name, with their modification times. */
function keptSteps(dataDir: string, jobId: string): Map<string, number> {
  const dir = path.join(dataDir, 'blobs', 'objects', 'jobs', jobId, 'internal', 'steps');
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) out.set(f, fs.statSync(path.join(dir, f)).mtimeMs);
  return out;
}

describe('Session durability', function () {
  this.timeout(300_000);
  let temporal: DevServer | undefined;
  let llm: LlmServer | undefined;
  let site: SessionSite | undefined;
  let dataDir = '';
  const procs: Proc[] = [];
  let release: () => void = () => {};

  after(async () => {
    release();
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await temporal?.stop();
    await llm?.close();
    await site?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes a session after a killed worker at the step it was in, without repeating a finished one', async () => {
    temporal = await startDevServer();
    site = await startSessionSite({ video: false });
    llm = await startLlmServer({ apiKey: LLM_KEY });
    const held = new Promise<void>((resolve) => (release = resolve));
    let templateCalls = 0;
    llm.respond(async (req) => {
      if (!req.json?.response_format) return undefined;
      templateCalls += 1;
      if (templateCalls === 1) await held; // the first call is in flight when the worker dies
      return { content: JSON.stringify({ title: 'Durable maps', topic: 'Maps', tags: ['maps'] }) };
    });
    dataDir = tempDir('docproc-session-kill-');
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      TASK_QUEUE_PREFIX: `sessionkill${port}`,
      ...llmEnv(llm, { LLM_TIMEOUT_MS: '600000' }),
    };
    const url = `http://127.0.0.1:${port}`;
    let worker = spawnService('worker', env);
    const api = spawnService('api', env);
    procs.push(worker, api);
    await waitFor(() => healthOk(url), 'a healthy service', 120_000);

    const created = (await fetch(`${url}/api/session/process-async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        event: 'Conf',
        session: 'Durable',
        url: `${site.base}/s/durable`,
        filename: 'durable',
        track: 'Main',
        attachments_url: `${site.base}/attachments`,
        source_language: 'en',
        target_language: 'en',
      }),
    }).then((r) => r.json())) as any;
    const jobId = created.data.job_id as string;

    await waitFor(async () => (templateCalls >= 1 ? true : undefined), 'the template call', 180_000, 100);
    worker.child.kill('SIGKILL');
    await worker.ended;
    const before = keptSteps(dataDir, jobId);
    expect([...before.keys()].sort()).to.deep.equal([
      'session-attachments-text.json',
      'session-attachments.json',
      'session-page-images.json',
      'session-page.json',
      'session-plan.json',
    ]);
    release();

    worker = spawnService('worker', env);
    procs.push(worker);
    const job = await waitForJobEnd(url, jobId, 180_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.output.markdown_content).to.include('# Durable maps');
    expect(job.results.output.attachments).to.have.length(2);

    // Every finished step kept its file; each download happened once; the template was asked again (its first call
    // never answered) and answered once.
    const after = keptSteps(dataDir, jobId);
    for (const [f, mtime] of before) expect(after.get(f), `step ${f} ran again`).to.equal(mtime);
    expect(after.has('session-template.json')).to.equal(true);
    expect([site.count('/s/durable'), site.count('/attachments'), site.count('/files/slides.pdf')]).to.deep.equal([
      1, 1, 1,
    ]);
    expect(templateCalls).to.equal(2);
    // The PDF child job ran once (a single run, a single start).
    const steps = path.join(dataDir, 'blobs', 'objects', 'jobs', jobId, 'internal', 'steps');
    const { files } = JSON.parse(fs.readFileSync(path.join(steps, 'session-attachments.json'), 'utf8'));
    const pdfJob = ((await fetch(`${url}/api/jobs/${files[0].pdfJobId}`).then((r) => r.json())) as any).data;
    expect(pdfJob.status).to.equal('completed');
    expect(pdfJob.logs.filter((l: { message: string }) => l.message.startsWith('Processing pdf job'))).to.have.length(
      1,
    );
  });
});
