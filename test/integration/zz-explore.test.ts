import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack';

function bigHtml(mb: number): string {
  const parts: string[] = [];
  let size = 0; let i = 0;
  while (size < mb * 1e6) { const p = `<p>Paragraph ${i} with <b>bold</b> and <a href="https://example.com/${i}">a link</a> text text text.</p><table><tr><th>A</th><th>B</th></tr><tr><td>${i}</td><td>x</td></tr></table>`; parts.push(p); size += p.length; i++; }
  return `<html><body>${parts.join('')}</body></html>`;
}
describe('explore', () => {
  let s: Stack;
  before(async function () { this.timeout(120000); const t = Date.now(); s = await startStack({}); console.log('stack', Date.now() - t); });
  after(() => s?.stop());
  it('runs', async function () {
    this.timeout(120000);
    let t = Date.now();
    const r = await s.call('POST', '/api/jobs/', { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<h1>Hi</h1><p>there</p>' } });
    console.log(JSON.stringify(r.body, null, 1));
    const d = await s.waitJob(r.body.data.job_id);
    console.log(Date.now() - t, JSON.stringify(d, null, 1));
    for (const mb of [3, 6]) {
      t = Date.now();
      const r2 = await s.call('POST', '/api/jobs/', { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: bigHtml(mb) } });
      console.log('create', Date.now() - t, r2.status);
      const d2 = await s.waitJob(r2.body.data.job_id, 60000);
      console.log(mb, 'MB', Date.now() - t, d2.status, d2.logs.map((l: any) => l.message));
    }
    const p = await s.call('POST', '/api/jobs/', { job_type: 'pdf', parameters: { filename: '/tmp/x.pdf' } });
    console.log(JSON.stringify(await s.waitJob(p.body.data.job_id), null, 1));
  });
});
