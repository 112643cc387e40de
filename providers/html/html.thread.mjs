// Worker-thread entry of providers/html: runs one HTML operation off the worker's event loop. Plain JS because
// worker threads do not inherit tsx's loader hooks; it registers them, then loads the TypeScript implementation.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { extractTables, htmlToMarkdown } = await import('../../core/html/index.ts');
const { operation, html } = workerData;
parentPort.postMessage(operation === 'html-to-markdown' ? htmlToMarkdown(html) : extractTables(html));
