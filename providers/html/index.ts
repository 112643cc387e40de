import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { extractTables, htmlToMarkdown, type ExtractedTable } from '../../core/html';

/** Inputs up to this size are converted inline (well under a second); larger ones in a worker thread. */
export const INLINE_HTML_CHARS = 256 * 1024;

const THREAD_ENTRY = new URL('./html.thread.mjs', import.meta.url);
const maxThreads = Math.max(1, os.availableParallelism());

/**
 * A small pool of long-lived conversion threads: each loads the converters once, so a large page pays only for its
 * own conversion. An aborted conversion terminates its thread; the pool starts a fresh one when needed.
 */
class ThreadPool {
  private idle: Worker[] = [];
  private size = 0;
  private waiting: ((w: Worker) => void)[] = [];
  private seq = 0;

  private spawn(): Worker {
    this.size++;
    const w = new Worker(THREAD_ENTRY);
    w.unref();
    w.once('exit', () => this.discard(w));
    return w;
  }

  private discard(w: Worker): void {
    if ((w as Worker & { discarded?: boolean }).discarded) return;
    (w as Worker & { discarded?: boolean }).discarded = true;
    this.size--;
    this.idle = this.idle.filter((x) => x !== w);
    void w.terminate();
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  private acquire(): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    if (this.size < maxThreads) return Promise.resolve(this.spawn());
    return new Promise((r) => this.waiting.push(r));
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  async run<T>(operation: string, html: string, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw signal.reason;
    const w = await this.acquire();
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const cleanup = () => {
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const onMessage = (m: { id?: number; result?: T; error?: string }) => {
        if (m.id !== id) return;
        cleanup();
        this.release(w);
        if (m.error !== undefined) reject(new Error(m.error));
        else resolve(m.result as T);
      };
      const onError = (e: Error) => {
        cleanup();
        this.discard(w);
        reject(e);
      };
      const onExit = (code: number) => {
        cleanup();
        reject(signal?.aborted ? signal.reason : new Error(`HTML conversion thread exited with ${code}`));
      };
      const onAbort = () => {
        cleanup();
        this.discard(w);
        reject(signal!.reason);
      };
      w.on('message', onMessage);
      w.once('error', onError);
      w.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      w.postMessage({ id, operation, html });
    });
  }
}

const pool = new ThreadPool();

function inThread<T>(operation: string, html: string, signal?: AbortSignal): Promise<T> {
  return pool.run<T>(operation, html, signal);
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
