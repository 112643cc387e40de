import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { listJobWorkflows } from '../support/workflows/job-list';
import { filesUnder, multipartBody, partialUpload } from '../support/clients/partial-upload';
import { spawnService, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';

// Issue #22: the API killed with SIGKILL while a client is half way through an upload (a raw socket that has sent the
// headers and half of a multipart body). The client sees its connection fail; once the API is back, no partial file
// is left under DATA_DIR/tmp/uploads or in the blob store, and no job exists for the truncated file. The same upload
// sent whole afterwards makes exactly one job (so the listing would show one made of the first).

describe('the API killed with an upload half sent', function () {
  this.timeout(180_000);
  let temporal: DevServer | undefined;
  let dataDir = '';
  const procs: Proc[] = [];

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await temporal?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no partial file, fails the client’s connection, and makes no job of the truncated file', async () => {
    temporal = await startDevServer();
    dataDir = tempDir('docproc-upload-kill-');
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      TASK_QUEUE_PREFIX: `uploadkill${port}`,
    };
    const url = `http://127.0.0.1:${port}`;
    const live = async () => ((await fetch(`${url}/api/health/live`)).status === 200 ? true : undefined);
    const uploads = path.join(dataDir, 'tmp', 'uploads');
    const blobs = path.join(dataDir, 'blobs');

    let api = spawnService('api', env);
    procs.push(api);
    await waitFor(live, 'the API', 60_000, 100);

    // 4 MB behind a PDF header (never read: the upload never ends), half of it sent.
    const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(4 * 1024 * 1024)]);
    const form = multipartBody({ extraction_method: 'native' }, { name: 'big.pdf', type: 'application/pdf', bytes });
    const upload = await partialUpload(url, '/api/pdf/process', form, { headers: { Prefer: 'respond-async' } });
    const partial = await waitFor(
      async () => filesUnder(uploads).find((f) => f.file.includes(`/p${api.child.pid}-`) && f.size > 0),
      'the half-sent upload on disk',
      60_000,
      20,
    );
    api.child.kill('SIGKILL');
    expect(await api.ended).to.equal('SIGKILL');
    const outcome = await upload.outcome;
    expect(outcome.kind, JSON.stringify(outcome)).to.equal('connection-error');
    expect(fs.existsSync(partial.file), 'the kill left the partial file').to.equal(true);

    api = spawnService('api', env);
    procs.push(api);
    await waitFor(live, 'the API back', 60_000, 100);
    expect(filesUnder(uploads), 'files under tmp/uploads').to.deep.equal([]);
    expect(
      fs.readdirSync(uploads).filter((d) => !d.startsWith(`p${api.child.pid}-`)),
      'upload dirs of dead processes',
    ).to.deep.equal([]);
    expect(filesUnder(path.join(blobs, 'objects', 'uploads')), 'uploads in the blob store').to.deep.equal([]);
    expect(filesUnder(path.join(blobs, 'tmp')), 'blob store temp files').to.deep.equal([]);
    expect(await listJobWorkflows(temporal.address), 'jobs after the restart').to.deep.equal([]);
    expect(filesUnder(path.join(blobs, 'objects', 'records')), 'job records').to.deep.equal([]);

    // The whole upload makes one job, listed.
    const body = new FormData();
    body.append('extraction_method', 'native');
    body.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }), 'big.pdf');
    const res = await fetch(`${url}/api/pdf/process`, { method: 'POST', headers: { Prefer: 'respond-async' }, body });
    const accepted = (await res.json()) as any;
    expect(res.status, JSON.stringify(accepted)).to.equal(202);
    expect(await listJobWorkflows(temporal.address, 1)).to.deep.equal([accepted.data.job_id]);
  });
});
