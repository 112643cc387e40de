import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../core/config/config';
import { IO_WORKER_SEMI_SPACE_MB, nodeFlags, pollsMedia } from '../../scripts/node-flags.mjs';

const ROOT = path.resolve(__dirname, '../..');
const SMALL = [`--max-semi-space-size=${IO_WORKER_SEMI_SPACE_MB}`];
const QUEUES = [undefined, '', 'all', 'both', 'BOTH', 'io', 'io,llm', 'llm', 'IO, LLM', 'media', 'io,media', ' Media '];

describe('the Node flags of a process: one rule wherever it is launched', () => {
  it('a worker that polls no media queue gets the small young generation; media workers, all-queue workers and the API do not', () => {
    for (const q of QUEUES) {
      const queues = loadConfig({ WORKER_QUEUES: q }).WORKER_QUEUES;
      expect(pollsMedia(q), `WORKER_QUEUES=${q}: as the worker's config reads it`).to.equal(queues.includes('media'));
      expect(nodeFlags('worker', q), `worker, WORKER_QUEUES=${q}`).to.deep.equal(queues.includes('media') ? [] : SMALL);
      expect(nodeFlags('api', q)).to.deep.equal([]);
    }
  });

  it("the image's entry point starts a worker with the same flags (the real script, a stand-in node on PATH)", function () {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-entry-'));
    try {
      fs.writeFileSync(path.join(bin, 'node'), '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
      for (const q of QUEUES) {
        const env: Record<string, string> = { PATH: `${bin}:/usr/bin:/bin` };
        if (q !== undefined) env.WORKER_QUEUES = q;
        const args = execFileSync('sh', [path.join(ROOT, 'scripts/docker-entrypoint.sh'), 'worker'], { env })
          .toString()
          .trim()
          .split(' ');
        expect(args, `WORKER_QUEUES=${q}`).to.deep.equal([
          ...nodeFlags('worker', q),
          '--import',
          'tsx',
          '/app/worker/main.ts',
        ]);
      }
      const api = execFileSync('sh', [path.join(ROOT, 'scripts/docker-entrypoint.sh'), 'api'], {
        env: { PATH: `${bin}:/usr/bin:/bin`, WORKER_QUEUES: 'io' },
      });
      expect(api.toString().trim()).to.equal('--import tsx /app/api/main.ts');
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});
