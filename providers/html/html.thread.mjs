// Worker-thread entry of providers/html: a long-lived thread that runs HTML operations off the worker's event loop,
// one message at a time. Plain JS because worker threads do not inherit tsx's loader hooks; it registers them, then
// loads the TypeScript implementation once.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { extractTables, htmlToMarkdown } = await import('../../core/html/index.ts');
parentPort.on('message', ({ id, operation, html }) => {
  try {
    const result = operation === 'html-to-markdown' ? htmlToMarkdown(html) : extractTables(html);
    parentPort.postMessage({ id, result });
  } catch (e) {
    parentPort.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
  }
});
parentPort.postMessage({ ready: true });
