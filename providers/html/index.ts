import os from 'node:os';
import type { ExtractedTable } from '../../core/html';
import { HtmlTooDeepError } from '../../core/html/limits';
import type { HtmlOperation, HtmlOutcome } from '../../core/html/outcome';
import { ThreadPool } from '../process/thread-pool';

/** Inputs up to this size are converted inline (well under a second); larger ones in a worker thread. */
export const INLINE_HTML_CHARS = 256 * 1024;

const THREAD_ENTRY = new URL('./html.thread.mjs', import.meta.url);
const maxThreads = Math.max(1, os.availableParallelism());

/** Long-lived conversion threads: each loads the converters once, so a large page pays only for its own conversion. */
const pool = new ThreadPool(THREAD_ENTRY, { maxThreads });

/**
 * The converters (cheerio, turndown: about 40 MB of a process's memory), loaded in this thread with the first small
 * page it converts inline: a process that converts none (an io worker downloading, the API serving other routes)
 * never loads them.
 */
const converters = () => import('../../core/html');

function inThread<T>(operation: string, html: string, signal?: AbortSignal): Promise<T> {
  return pool.run<T>({ operation, html }, signal);
}

/**
 * HTML → Markdown. A large page takes seconds of CPU (about 1 s per MB); it runs in a worker thread so the
 * worker's event loop keeps answering queries, heartbeats and other jobs meanwhile. `signal` aborts it.
 */
export function convertHtmlToMarkdown(html: string, signal?: AbortSignal): Promise<string> {
  if (html.length <= INLINE_HTML_CHARS) return converters().then((c) => c.htmlToMarkdown(html));
  return inThread<string>('html-to-markdown', html, signal);
}

/** The tables of an HTML page; large pages in a worker thread, as {@link convertHtmlToMarkdown}. */
export function extractHtmlTables(html: string, signal?: AbortSignal): Promise<ExtractedTable[]> {
  if (html.length <= INLINE_HTML_CHARS) return converters().then((c) => c.extractTables(html));
  return inThread<ExtractedTable[]>('extract-tables', html, signal);
}

/**
 * The whole operation (depth check, conversion, shaping: core/html/run.ts) in a worker thread, whatever the size:
 * for a caller whose event loop serves others (the API answering small transforms itself). A page nested too deeply
 * rejects with `HtmlTooDeepError` (422), as it does in the activity.
 */
export async function runHtmlOperationInThread(
  operation: HtmlOperation,
  html: string,
  signal?: AbortSignal,
): Promise<HtmlOutcome> {
  try {
    return await pool.run<HtmlOutcome>({ operation, html, whole: true }, signal);
  } catch (e) {
    const err = e as { code?: string; details?: { max_depth?: number } };
    if (err?.code === 'UNPROCESSABLE_INPUT' && typeof err.details?.max_depth === 'number')
      throw new HtmlTooDeepError(err.details.max_depth);
    throw e;
  }
}

/** Requests the conversion threads have answered in this process (tests check the API's transforms ran there). */
export const htmlThreadRuns = (): number => pool.runs;
