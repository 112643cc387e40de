import { expect } from 'chai';
import { extractTables, htmlToMarkdown } from '../../core/html';
import { HtmlTooDeepError, MAX_HTML_DEPTH } from '../../core/html/limits';
import { runHtmlOperation } from '../../core/html/run';
import {
  convertHtmlToMarkdown,
  extractHtmlTables,
  htmlThreadRuns,
  INLINE_HTML_CHARS,
  runHtmlOperationInThread,
} from '../../providers/html';
import { htmlOfSize } from '../support/workflows/workflow-env';

// Large pages convert in a worker thread so the worker's event loop (workflow activations, queries, heartbeats)
// keeps running meanwhile.

function tablesHtml(rows: number): string {
  const body = Array.from({ length: rows }, (_, i) => `<tr><td>${i}</td><td colspan="2">cell ${i}</td></tr>`).join('');
  return `<html><body><table><thead><tr><th>N</th><th>A</th><th>B</th></tr></thead><tbody>${body}</tbody></table></body></html>`;
}

describe('HTML conversion off the event loop', function () {
  this.timeout(60_000);

  it('converts a page above the inline limit to the same Markdown as inline while the event loop keeps ticking', async () => {
    const html = htmlOfSize(1_500_000, 'thread');
    expect(html.length).to.be.greaterThan(INLINE_HTML_CHARS);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = Date.now();
    const md = await convertHtmlToMarkdown(html);
    const tookMs = Date.now() - started;
    clearInterval(timer);
    // A blocked loop would tick once or not at all; a free one about every 20 ms.
    expect(ticks, `ticks in ${tookMs} ms`).to.be.greaterThan(tookMs / 20 / 4);
    expect(md === htmlToMarkdown(html), 'same Markdown as inline').to.equal(true);
  });

  it('extracts the tables of a large page in a thread exactly as inline', async () => {
    const html = tablesHtml(8000);
    expect(html.length).to.be.greaterThan(INLINE_HTML_CHARS);
    expect(await extractHtmlTables(html)).to.deep.equal(extractTables(html));
  });

  it('stops a conversion when its signal aborts and rejects with the abort reason', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const conversion = convertHtmlToMarkdown(htmlOfSize(4_000_000, 'abort'), ac.signal);
    setTimeout(() => ac.abort(new Error('cancelled by the test')), 300);
    const err = await conversion.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.equal('cancelled by the test');
    expect(Date.now() - started, 'ms until the rejection').to.be.lessThan(2000);
  });

  it('converts a small page inline', async () => {
    expect(await convertHtmlToMarkdown('<h1>Hi</h1><p>there</p>')).to.equal('# Hi\n\nthere');
  });

  it('runs the whole operation in a thread, whatever the size, as the inline code does; a deep page is HtmlTooDeepError', async () => {
    const html = tablesHtml(20);
    for (const op of ['html-to-markdown', 'extract-tables'] as const) {
      const runs = htmlThreadRuns();
      expect(await runHtmlOperationInThread(op, html)).to.deep.equal(runHtmlOperation(op, html));
      expect(htmlThreadRuns(), 'ran on a thread').to.equal(runs + 1);
    }
    const deep = `${'<i>'.repeat(MAX_HTML_DEPTH + 1)}x`;
    const err = await runHtmlOperationInThread('html-to-markdown', deep).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(HtmlTooDeepError);
    expect((err as HtmlTooDeepError).details).to.deep.equal({ max_depth: MAX_HTML_DEPTH });
  });
});
