// Worker-thread entry of providers/pdf/native-markdown-thread.ts: a long-lived pool thread that answers one request at
// a time ({ id, ...request } → { id, result }), the `data` bytes transferred (not copied). Plain JS because worker
// threads do not inherit tsx's loader hooks; it registers them, then loads the TypeScript implementation.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { answerNativeMarkdown } = await import('./native-markdown-thread.ts');
parentPort.on('message', async ({ id, ...request }) => {
  // A warm-up: the modules are loaded (above); nothing to read.
  if (request.warm) return parentPort.postMessage({ id, result: null });
  const reply = await answerNativeMarkdown(request);
  if (!('result' in reply)) return parentPort.postMessage({ id, result: reply });
  // A buffer of its own (a small one may share Buffer's pool slab, which must not be transferred).
  const d = reply.result.data;
  const data = d.byteOffset === 0 && d.byteLength === d.buffer.byteLength ? d : new Uint8Array(d);
  parentPort.postMessage({ id, result: { result: { ...reply.result, data } } }, [data.buffer]);
});
