import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowBundle, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Logger } from '../core/runtime/logger';
import { temporalLogger } from './temporal-logger';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
const CHILD = fileURLToPath(new URL('./workflow-bundle.child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The workflow bundle, built by webpack in this process (tests build it once per file and share it). */
export async function bundleWorkflows(logger: Logger): Promise<WorkflowBundleWithSourceMap> {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: temporalLogger(logger.child({ part: 'bundler' }, { level: 'warn' })),
  });
}

/**
 * The workflow bundle, built in a short-lived child process (worker/workflow-bundle.child.ts): webpack, its loaders
 * and their caches take about 120 MB that V8 and the allocator never hand back, so a worker that bundled in process
 * would carry them for its whole life. The child's log lines go where this process's go (stdout, inherited).
 */
export async function bundleWorkflowsApart(logger: Logger): Promise<WorkflowBundle> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'docproc-workflow-bundle-'));
  try {
    const file = path.join(dir, 'workflows.js');
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c, signal) => resolve(signal ? -1 : c));
    });
    if (code !== 0) {
      logger.error({ code, stderr }, 'workflow bundle child failed');
      throw new Error(`building the workflow bundle failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`);
    }
    return { code: await fs.readFile(file, 'utf8') };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
