import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { extractTables, htmlToMarkdown, type ExtractedTable } from '../../core/html';

/** Inputs up to this size are converted inline (well under a second); larger ones in a worker thread. */
export const INLINE_HTML_CHARS = 256 * 1024;

const THREAD_ENTRY = new URL('./html.thread.mjs', import.meta.url);
const maxThreads = Math.max(1, os.availableParallelism());
let threads = 0;
const queue: (() => void)[] = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (threads >= maxThreads) await new Promise<void>((r) => queue.push(r));
  threads++;
  try {
    return await fn();
  } finally {
    threads--;
    queue.shift()?.();
  }
}

function inThread<T>(operation: string, html: string, signal?: AbortSignal): Promise<T> {
  return slot(
    () =>
      new Promise<T>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const worker = new Worker(THREAD_ENTRY, { workerData: { operation, html } });
        const onAbort = () => void worker.terminate().finally(() => reject(signal!.reason));
        signal?.addEventListener('abort', onAbort, { once: true });
        worker.once('message', (m: T) => resolve(m));
        worker.once('error', reject);
        worker.once('exit', (code) => {
          signal?.removeEventListener('abort', onAbort);
          reject(signal?.aborted ? signal.reason : new Error(`HTML conversion thread exited with ${code}`));
        });
      }),
  );
}

/**
 * HTML → Markdown. A large page takes seconds of CPU (about 1 s per MB); it runs in a worker thread so the
 * worker's event loop keeps answering queries, heartbeats and other jobs meanwhile. `signal` aborts it.
 */
export function convertHtmlToMarkdown(html: string, signal?: AbortSignal): Promise<string> {
  if (html.length <= INLINE_HTML_CHARS) return Promise.resolve(htmlToMarkdown(html));
  return inThread<string>('html-to-markdown', html, signal);
}

/** The tables of an HTML page; large pages in a worker thread, as {@link convertHtmlToMarkdown}. */
export function extractHtmlTables(html: string, signal?: AbortSignal): Promise<ExtractedTable[]> {
  if (html.length <= INLINE_HTML_CHARS) return Promise.resolve(extractTables(html));
  return inThread<ExtractedTable[]>('extract-tables', html, signal);
}
