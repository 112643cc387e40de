import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Scratch } from '../../core/stores/scratch';
import { LocalBlobStore } from '../../providers/storage';
import { tempDir } from '../support/servers/engines';

// The workers' scratch space (core/stores/scratch.ts) on a real local blob store and file system.

describe('Scratch files', () => {
  const root = tempDir('docproc-scratch-');
  const store = new LocalBlobStore(path.join(root, 'blobs'));
  before(() => store.init());

  it('shares one private copy of a blob among the steps using it at once and removes it after the last', async () => {
    const ref = await store.put('uploads/doc.bin', Buffer.from('content of the document'));
    const scratch = new Scratch(path.join(root, 'scratch'));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const first = scratch.withBlobFile(store, ref.key, ref.sha256, '.pdf', async (file) => {
      seen.push(file);
      await held;
      return readFileSync(file, 'utf8');
    });
    await scratch.withBlobFile(store, ref.key, ref.sha256, '.pdf', async (file) => {
      seen.push(file);
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      expect(statSync(path.dirname(file)).mode & 0o777).to.equal(0o700);
    });
    expect(seen[0]).to.equal(seen[1]);
    expect(existsSync(seen[0]), 'still used by the first step').to.equal(true);
    release();
    expect(await first).to.equal('content of the document');
    expect(existsSync(seen[0])).to.equal(false);
    expect(readdirSync(path.join(scratch.dir, 'files'))).to.deep.equal([]);
  });

  it('removes a step directory whatever the step does, and the directories of dead processes', async () => {
    const base = path.join(root, 'scratch2');
    // A process that is gone: a child that has exited, its pid no longer running.
    const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const dead = path.join(base, `p${deadPid}-abc123`);
    mkdirSync(path.join(dead, 'files'), { recursive: true });
    writeFileSync(path.join(dead, 'files', 'left-behind'), 'x');
    const scratch = new Scratch(base);
    let dir = '';
    const failed = await scratch
      .withDir('ocr-', async (d) => {
        dir = d;
        writeFileSync(path.join(d, 'page.pgm'), 'P5');
        throw new Error('the engine failed');
      })
      .catch((e: Error) => e);
    expect(String(failed)).to.include('the engine failed');
    expect(existsSync(dir)).to.equal(false);
    expect(dir.startsWith(scratch.dir + path.sep)).to.equal(true);
    expect(existsSync(dead), "a dead process's directory").to.equal(false);
    expect(statSync(base).mode & 0o777).to.equal(0o700);
  });
});
