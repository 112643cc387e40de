import { expect } from 'chai';
import { useStack, type Stack } from '../support/servers/stack';
import { buildPdf, wrapText } from '../support/documents/pdf-factory';
import { postMultipart } from '../support/clients/pdf-http';

// Every endpoint that runs work as a job and waits for it also answers asynchronously (contract §3): with
// `Prefer: respond-async` or `wait_ms=0` it answers 202 with the job at once (an upload stays with the job), with
// `wait_ms=N` it waits up to N ms and then hands the job over with 202 instead of 504. The real API and worker.

const pdfOf = (pages: number) =>
  buildPdf({
    pages: Array.from({ length: pages }, (_, i) => ({
      kind: 'lines' as const,
      size: 16,
      lines: wrapText(`Async page ${i + 1}. The quick brown fox jumps over the lazy dog.`, 50),
    })),
  });

describe('asynchronous answers of the synchronous endpoints', function () {
  this.timeout(120_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  it('Prefer: respond-async answers 202 with the job at once, Preference-Applied and a Location to poll; the job completes', async () => {
    const r = await fetch(`${s.url}/api/transformer/html-to-markdown`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Prefer: 'respond-async, wait=10' },
      body: JSON.stringify({ html: '<h1>Later</h1><p>Handed over.</p>' }),
    });
    const body = (await r.json()) as any;
    expect(r.status, JSON.stringify(body)).to.equal(202);
    expect(r.headers.get('preference-applied')).to.equal('respond-async');
    const jobId = body.data.job_id;
    expect(r.headers.get('location')).to.equal(`/api/jobs/${jobId}`);
    const job = await s.waitJob(jobId);
    expect(job.status).to.equal('completed');
    expect(JSON.stringify(job.results)).to.include('# Later');
  });

  it('wait_ms=0 hands an uploaded PDF over at once, and the job still reads the upload', async () => {
    const r = await postMultipart(
      `${s.url}/api/pdf/process?wait_ms=0`,
      { extraction_method: 'native' },
      { bytes: pdfOf(2), name: 'async.pdf', type: 'application/pdf' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    expect(r.headers.get('preference-applied')).to.equal(null);
    const job = await s.waitJob(r.body.data.job_id);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.data?.extracted_text ?? JSON.stringify(job.results)).to.include('Async page 2');
  });

  it('wait_ms=N waits up to N ms, then hands a job that is still running over with 202, not 504', async () => {
    const r = await postMultipart(
      `${s.url}/api/pdf/process?wait_ms=1`,
      { extraction_method: 'local_ocr' },
      { bytes: pdfOf(3), name: 'ocr.pdf', type: 'application/pdf' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    expect(r.body.data.status).to.equal('processing');
    const job = await s.waitJob(r.body.data.job_id, 120_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
  });

  it('without a preference the endpoint answers 200 with the result, and a wait_ms that is not a whole number from 0 to 300000 is a 400 naming it', async () => {
    const ok = await s.call('POST', '/api/transformer/html-to-markdown', { html: '<h1>Now</h1>' });
    expect(ok.status).to.equal(200);
    for (const bad of ['abc', '-1', '300001', '1.5']) {
      const r = await s.call('POST', `/api/transformer/html-to-markdown?wait_ms=${bad}`, { html: '<h1>x</h1>' });
      expect(r.status, bad).to.equal(400);
      expect(r.body.error.details.issues[0].path).to.equal('wait_ms');
    }
  });
});
