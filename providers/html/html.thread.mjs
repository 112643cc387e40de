// Worker-thread entry of providers/html: a long-lived thread that runs HTML operations off the caller's event loop
// (the worker's, or the API's for small inputs), one message at a time. Plain JS because worker threads do not inherit
// tsx's loader hooks; it registers them, then loads the TypeScript implementation once.
// `whole: true` runs the whole operation (depth check, conversion, shaping: core/html/run.ts `runHtmlOperation`);
// otherwise the converter alone.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { extractTables, htmlToMarkdown } = await import('../../core/html/index.ts');
const { runHtmlOperation } = await import('../../core/html/run.ts');
parentPort.on('message', ({ id, operation, html, whole }) => {
  try {
    const result = whole
      ? runHtmlOperation(operation, html)
      : operation === 'html-to-markdown'
        ? htmlToMarkdown(html)
        : extractTables(html);
    parentPort.postMessage({ id, result });
  } catch (e) {
    parentPort.postMessage({
      id,
      error: e instanceof Error ? e.message : String(e),
      ...(e && typeof e === 'object' && typeof e.code === 'string' ? { code: e.code, details: e.details } : {}),
    });
  }
});
parentPort.postMessage({ ready: true });
