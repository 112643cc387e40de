// Worker-thread entry of providers/pdf/pdfjs-thread.ts: a long-lived pool thread that answers one request at a time
// ({ id, ...request } → { id, result }). pdf.js is loaded here only, so its polyfills stay in this thread's isolate.
// Plain JS because worker threads do not inherit tsx's loader hooks; it registers them, then loads the TypeScript
// implementation.
//
// pdf.js and its worker module are imported before the hooks are registered: through tsx's hooks (source maps on)
// the two take 1.2 s to load, natively 0.2 s. pdfjs.ts's own import of pdf.js then
// finds the module loaded; the worker module sets globalThis.pdfjsWorker, which pdf.js's in-thread "fake worker" uses
// instead of importing one. The minified worker module is the same build and loads in half the time.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

await import('pdfjs-dist/legacy/build/pdf.mjs');
await import('pdfjs-dist/legacy/build/pdf.worker.min.mjs');
register();
const { answerPdfRequest } = await import('./pdfjs-thread.ts');
parentPort.on('message', async ({ id, ...request }) => {
  parentPort.postMessage({ id, result: await answerPdfRequest(request) });
});
