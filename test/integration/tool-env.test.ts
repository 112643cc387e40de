import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { expect } from 'chai';
import { ocrImage } from '../../providers/ocr/tesseract';
import { runLaunchedTool, ToolLauncher } from '../../providers/process/launcher';
import { runTool } from '../../providers/process/run-tool';
import { EngineProcess } from '../../providers/speech/engine/process';
import { withoutServiceSecrets } from '../../scripts/services.mjs';
import { grayPng } from '../support/documents/png';
import { tempDir } from '../support/servers/engines';

// Spawned tools get a clean environment (issue 33 item 7): an allow-list of what engines need, none of the service's
// keys. The service's secrets are put into this process's environment (as a deployment sets them), then tools are
// run the ways the service runs them (run-tool, the tool launcher and its tools, tesseract, the speech engine) and
// their environments read back: `env`'s output, or /proc/<pid>/environ of the running engine.

const SECRETS: Record<string, string> = {
  SERVICE_API_KEY: 'svc-key-tool-env',
  LLM_API_KEY: 'llm-key-tool-env',
  OPENAI_API_KEY: 'openai-key-tool-env',
  SPEECH_API_KEY: 'speech-key-tool-env',
  EXTERNAL_OCR_API_KEY: 'ocr-key-tool-env',
  S3_ACCESS_KEY: 's3-access-tool-env',
  S3_SECRET_KEY: 's3-secret-tool-env',
  WEBHOOK_SIGNING_SECRET: 'webhook-secret-tool-env',
  TEMPORAL_API_KEY: 'temporal-key-tool-env',
};

/** `NAME=value` lines (env's output) or NUL-separated entries (/proc/<pid>/environ) as a map. */
const parseEnv = (text: string, sep: string | RegExp): Map<string, string> =>
  new Map(
    text
      .split(sep)
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

function expectClean(env: Map<string, string>, what: string): void {
  const leaked = [...env].filter(([k, v]) => k in SECRETS || Object.values(SECRETS).includes(v)).map(([k]) => k);
  expect(leaked, `${what}: service keys in its environment`).to.deep.equal([]);
  // What engines need is kept (a python shim may put its own directories first).
  expect(env.get('PATH'), `${what}: PATH`)
    .to.be.a('string')
    .and.satisfy((p: string) => p.endsWith(process.env.PATH!));
  // Nor any other setting of the service.
  expect(
    [...env.keys()].filter((k) => /^(TEMPORAL_|S3_|LLM_|DATA_DIR|HOST$|PORT$)/.test(k)),
    what,
  ).to.deep.equal([]);
}

const environOf = (pid: number): Map<string, string> =>
  parseEnv(fs.readFileSync(`/proc/${pid}/environ`, 'latin1'), '\0');

describe("spawned tools get a clean environment: none of the service's keys", function () {
  this.timeout(60_000);
  const saved: Record<string, string | undefined> = {};

  before(() => {
    for (const [k, v] of Object.entries(SECRETS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    process.env.DATA_DIR = '/tmp/tool-env-data';
  });
  after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    delete process.env.DATA_DIR;
  });

  it('a tool run directly (ffmpeg, poppler, yt-dlp: run-tool) sees none of them', async () => {
    const { stdout } = await runTool('env', [], { timeoutMs: 10_000 });
    expectClean(parseEnv(stdout.toString('utf8'), '\n'), 'env through runTool');
  });

  it('the tool launcher and the tools it starts see none of them', async () => {
    const launcher = new ToolLauncher();
    try {
      const { stdout } = await launcher.run('env', [], { timeoutMs: 10_000 });
      expectClean(parseEnv(stdout.toString('utf8'), '\n'), 'env through the launcher');
      expectClean(environOf(launcher.pid!), 'the launcher itself');
      const shared = await runLaunchedTool('env', [], { timeoutMs: 10_000 });
      expectClean(parseEnv(shared.stdout.toString('utf8'), '\n'), 'env through the shared launcher');
    } finally {
      launcher.stop();
    }
  });

  it('tesseract sees none of them, and keeps its thread limit', async () => {
    const dir = tempDir('docproc-tool-env-');
    const image = path.join(dir, 'blank.png');
    const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(200, 255)]);
    fs.writeFileSync(image, grayPng(200, 60, 8, deflateSync(Buffer.concat(Array.from({ length: 60 }, () => row)))));
    let seen: Map<string, string> | undefined;
    await ocrImage(image, {
      languages: ['eng'],
      onSpawn: (pid) => {
        try {
          seen = environOf(pid);
        } catch {
          // exited already: the assertion below names it
        }
      },
    });
    expect(seen, 'read the running tesseract').to.not.equal(undefined);
    expectClean(seen!, 'tesseract');
    expect(seen!.get('OMP_THREAD_LIMIT')).to.equal('1');
  });

  it('the local model server (npm start) is started without them', () => {
    const env = withoutServiceSecrets({ ...process.env, LLM_LOCAL_CONTEXT: '4096' }) as Record<string, string>;
    expect(Object.keys(SECRETS).filter((k) => k in env)).to.deep.equal([]);
    expect(env.LLM_LOCAL_CONTEXT, 'its own settings stay').to.equal('4096');
  });

  it('the speech engine sees none of them', async function () {
    if (!process.env.SPEECH_PYTHON || !process.env.SPEECH_MODEL_DIR) this.skip();
    const engine = new EngineProcess({
      python: process.env.SPEECH_PYTHON!,
      modelDir: process.env.SPEECH_MODEL_DIR!,
      threads: 1,
    });
    try {
      expectClean(environOf(engine.child.pid!), 'the speech engine');
    } finally {
      await engine.kill();
    }
  });
});
