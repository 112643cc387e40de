import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { noLlmUnlessAsked } from './llm-default';
import { asNpmStart } from './launch-env';
import { nodeFlags } from '../../../scripts/node-flags.mjs';
import { waitFor } from '../wait';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Exit code, or the signal name when a signal ended it. */
  ended: Promise<number | string>;
}

/** Spawns a process with captured output (kept for assertions and shown when a test fails). */
export function spawnProc(cmd: string, args: string[], env: Record<string, string | undefined>): Proc {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const ended = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const exited = ended.then((v) => (typeof v === 'number' ? v : null));
  return { child, output: () => out, exited, ended };
}

/**
 * The worker or API process as `npm start` runs it, with the Node flags of its layout (scripts/node-flags.mjs). Without
 * its warm-up (`WARM_UP=false`: the speech engines and the API's own requests) unless `env` asks for it: the tests that
 * spawn these processes test other things, and test/e2e/start.e2e.test.ts tests the warm-up.
 */
export function spawnService(name: 'api' | 'worker', env: Record<string, string | undefined>): Proc {
  const full: Record<string, string | undefined> = asNpmStart(
    noLlmUnlessAsked({ ...process.env, LOG_LEVEL: 'info', WARM_UP: 'false', ...env }),
  );
  return spawnProc(
    process.execPath,
    [...nodeFlags(name, full.WORKER_QUEUES), '--import', 'tsx', path.join(ROOT, name, 'main.ts')],
    full,
  );
}

export async function healthOk(url: string): Promise<Record<string, any> | undefined> {
  const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as Record<string, any>;
  return res.status === 200 && body.status === 'ok' ? body : undefined;
}

/** Long-polls a job of the service at `url` until it is completed or failed; answers the job. */
export function waitForJobEnd(url: string, jobId: string, timeoutMs: number): Promise<any> {
  return waitFor(
    async () => {
      const r = (await fetch(`${url}/api/jobs/${jobId}?wait=5`).then((x) => x.json())) as any;
      return r.data.status === 'completed' || r.data.status === 'failed' ? r.data : undefined;
    },
    'the job to finish',
    timeoutMs,
    100,
  );
}
