import { expect } from 'chai';
import { existsSync, rmSync } from 'node:fs';
import { loadConfig } from '../../core/config/config';
import { freePort } from '../../scripts/services.mjs';
import { npmStart, untilBanner, type Launched } from '../support/servers/launcher';
import { waitForJobEnd } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { tempDir } from '../support/servers/engines';
import { alive, killPid } from '../support/servers/stack-procs';

// `npm start` with the real local model (Qwen2.5-Coder-1.5B GGUF in llm-server/main.ts, no stand-in): the model
// server is killed with SIGKILL while it generates a job's answer. npm start restarts it on its port, /api/health
// shows it unavailable meanwhile, and the job completes with its own answer, its one model call answered once.

const MODEL_PATH = loadConfig({
  LLM_LOCAL_MODEL_PATH: process.env.LLM_LOCAL_MODEL_PATH,
  DOCPROC_CACHE_DIR: process.env.DOCPROC_CACHE_DIR,
}).localLlm.modelPath;

const MEETING =
  'Minutes of the project meeting of 14 March 2025 in Hamburg. Present: Anna Schmidt, Jonas Weber and Lea Braun. ' +
  'The tests are moved forward by one week.';
const TEMPLATE =
  '# {{title|A short title of the meeting}}\n\nDate: {{date|The date of the meeting, ISO format YYYY-MM-DD}}';

describe('npm start with the local model server killed mid-generation (slow)', function () {
  this.timeout(1_200_000);
  let stack: Launched | undefined;
  let dataDir: string | undefined;

  afterEach(async () => {
    if (stack) await stack.stop(120_000).catch(() => stack?.killAll());
    stack = undefined;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('restarts it, shows it unavailable meanwhile, and the job completes with one answered model call', async () => {
    if (!existsSync(MODEL_PATH))
      throw new Error(`no local model at ${MODEL_PATH}: run node scripts/engines-llm.mjs (npm test does)`);
    dataDir = tempDir('docproc-llm-kill-');
    stack = await npmStart(await freePort(), dataDir, {
      LLM_PROVIDER: 'local',
      LLM_BASE_URL: undefined,
      OPENAI_BASE_URL: undefined,
      LLM_API_KEY: undefined,
      OPENAI_API_KEY: undefined,
      LLM_LOCAL_MODEL_PATH: MODEL_PATH,
      LLM_LOCAL_PORT: String(await freePort()),
      LLM_LOCAL_SLOTS: '1',
      // Enough retries to outlast the model server's restart (it reloads the model).
      LLM_MAX_RETRIES: '10',
    });
    const s = stack;
    await untilBanner(s, 900_000);
    const modelUrl = /\[setup\] llm: ready in [\d.]+ s on (http:\/\/[^\s]+)/.exec(s.output())?.[1];
    expect(modelUrl, s.output().slice(-2000)).to.be.a('string');
    const modelHealth = async () =>
      (await (await fetch(new URL('/health', modelUrl), { signal: AbortSignal.timeout(5000) })).json()) as {
        active: number;
      };

    const created = (await fetch(`${s.url}/api/jobs/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'transformer',
        parameters: { operation: 'template', text: MEETING, template_content: TEMPLATE, target_language: 'en' },
      }),
    }).then((r) => r.json())) as { data: { job_id: string } };
    expect(created.data?.job_id, JSON.stringify(created)).to.be.a('string');
    const jobId = created.data.job_id;
    // The job's own state beside the model's: a job that ended before the model was seen busy is the failure shown.
    const seen = await waitFor(
      async () => {
        if ((await modelHealth()).active === 1) return { generating: true } as const;
        const j = (await (await fetch(`${s.url}/api/jobs/${jobId}`)).json()) as any;
        return ['completed', 'failed'].includes(j.data?.status) ? { generating: false, job: j } : undefined;
      },
      'the model generating',
      600_000,
      50,
    );
    expect(seen.generating, JSON.stringify(seen).slice(0, 1000)).to.equal(true);
    const pid = s.pid('llm-server/main.ts');
    const killedAt = Date.now();
    killPid(pid);
    await waitFor(async () => (alive(pid) ? undefined : true), 'the killed model server gone', 30_000, 20);

    // Meanwhile the health report says the model is unavailable (the API itself stays up).
    const during = await waitFor(
      async () => {
        const h = (await (await fetch(`${s.url}/api/health`)).json()) as any;
        return h.checks?.providers?.llm?.status === 'unavailable' ? h : undefined;
      },
      'the health report showing the model server down',
      60_000,
      100,
    );
    expect(during.checks.providers.llm.provider).to.equal('local');

    await waitFor(
      async () => (/\[setup\] llm: restarted/.test(s.output()) ? true : undefined),
      'npm start restarting the model server',
      600_000,
      100,
    );
    const newPid = s.pid('llm-server/main.ts');
    expect(newPid).to.not.equal(pid);
    const back = await waitFor(
      async () => {
        const h = (await (await fetch(`${s.url}/api/health`)).json()) as any;
        return h.checks?.providers?.llm?.status === 'ok' ? Date.now() : undefined;
      },
      'the model server healthy again',
      600_000,
      100,
    );
    console.log(
      `      model server killed mid-generation: healthy again after ${((back - killedAt) / 1000).toFixed(1)} s`,
    );

    const job = await waitForJobEnd(s.url, jobId, 900_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.template_fields.date).to.match(/2025-03-14/);
    expect(job.results.llm_info.requests, 'one answered model call: the cut one was not counted twice').to.have.length(
      1,
    );
    expect(s.output()).to.match(/\[setup\] llm: exited unexpectedly \(SIGKILL\)/);
  });
});
