import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import pino from 'pino';
import { createActivities } from '../../../activities';
import type { BlobStore } from '../../../core/stores/blob-store';
import { loadConfig } from '../../../core/config/config';
import { taskQueues } from '../../../core/jobs/ids';
import { LocalBlobStore } from '../../../providers/storage';
import { createEngines } from '../../../worker/engines';
import { tempDir } from '../servers/engines';
import { grayPng } from '../documents/png';
import { noLlmUnlessAsked } from '../servers/llm-default';
import { asNpmStart } from '../servers/launch-env';

/** The real activities (createActivities) over a real local blob store in a fresh data dir; `remove` deletes it. */
export async function realActivities(env: Record<string, string> = {}) {
  const dataDir = tempDir('docproc-act-');
  const config = loadConfig(asNpmStart(noLlmUnlessAsked({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env })));
  const store: BlobStore = await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const activities = createActivities({ config, logger, store, queues: taskQueues('act'), ...createEngines(config) });
  return { activities, store, remove: () => rm(dataDir, { recursive: true, force: true }) };
}

/** A 1-bit PNG of black and white pixel noise: tesseract spends many seconds on a large one. */
export function noisePng(width: number, height: number): Buffer {
  const row = 1 + Math.ceil(width / 8);
  const raw = randomBytes(row * height);
  for (let y = 0; y < height; y++) raw[y * row] = 0; // filter type None
  return grayPng(width, height, 1, deflateSync(raw, { level: 1 }));
}

/** Child processes of this process whose command line matches `pattern`, by pid (from `ps`). */
export function childProcesses(pattern: RegExp): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    /* ps exits 1 when no process matches */
  }
  return out
    .split('\n')
    .map((l) => l.trim().match(/^(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => !!m && pattern.test(m[2]))
    .map((m) => Number(m[1]));
}

/** Whether a process with this pid exists (signal 0 probes without sending anything). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
