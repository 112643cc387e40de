import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LocalBlobStore } from '../../providers/storage';
import { ROOT } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { tempDir } from '../support/servers/engines';

// Found by the chaos test (test/slow/chaos.test.ts): a process killed with SIGKILL in the middle of a blob write left
// its temp file under the store's tmp/ for a day. Temp files carry their writer's pid; a store opening removes those
// of writers that no longer run, and keeps those of live ones.

describe('the local blob store after a writer was killed mid-write', function () {
  this.timeout(60_000);

  it('removes the killed writer’s temp file when it opens, and keeps a live writer’s', async () => {
    const root = tempDir('docproc-store-crash-');
    const tmp = path.join(root, 'tmp');
    const writer = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/support/stores/slow-blob-writer.ts')],
      {
        cwd: ROOT,
        env: { ...process.env, BLOB_ROOT: root },
        stdio: 'ignore',
      },
    );
    // A live process whose pid names a temp file: this one (a test process writing), and another.
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const partial = await waitFor(
        async () => {
          const f = fs.existsSync(tmp) ? fs.readdirSync(tmp).find((n) => n.startsWith(`p${writer.pid}-`)) : undefined;
          return f && fs.statSync(path.join(tmp, f)).size > 0 ? f : undefined;
        },
        'the writer’s temp file growing',
        30_000,
        20,
      );
      const gone = new Promise((r) => writer.once('exit', r));
      writer.kill('SIGKILL');
      await gone;
      expect(fs.readdirSync(tmp), 'left by the kill').to.include(partial);
      // The store's health probe is named like a temp file, so one cut by a kill goes the same way (the chaos test
      // found a `health-…` probe left behind when it was not).
      fs.writeFileSync(path.join(tmp, `p${writer.pid}-health-probe`), 'ok');
      const live = [`p${sleeper.pid}-live`, `p${process.pid}-mine`, 'unnamed-recent'];
      for (const f of live) fs.writeFileSync(path.join(tmp, f), 'x');

      await new LocalBlobStore(root).init();

      expect(fs.readdirSync(tmp).sort()).to.deep.equal([...live].sort());
      expect(fs.existsSync(path.join(root, 'objects', 'jobs', 'killed')), 'no object of the cut write').to.equal(false);
    } finally {
      if (writer.exitCode === null && writer.signalCode === null) writer.kill('SIGKILL');
      sleeper.kill('SIGKILL');
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
