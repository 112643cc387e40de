/**
 * The `pdfjs` text engine's work in worker threads: a pool of up to one thread per core, each loading pdf.js once
 * and serving one call at a time (open the document, describe it or read a group of pages, answer); a thread idle
 * for a minute ends. Two reasons, both measured:
 * - the pdf.js legacy build's core-js polyfills replace `JSON.stringify`, `JSON.parse` and `Array.prototype.push`
 *   (and `Function.prototype.toString`, so the replacements still print as native code) of the isolate that loads
 *   it, and switch off V8's fast paths there for good: `JSON.stringify` of 1.2 MB of results takes 45 ms instead of
 *   2 ms. In a thread only that thread's isolate pays; the worker's Temporal payloads keep the fast paths.
 * - pdf.js parses synchronously, so a timer on its own thread cannot interrupt a PDF that makes it spin. A thread
 *   can be terminated: on the time limit and on abort it is (and the pool starts a fresh one when needed).
 * The thread reads the file itself (no bytes are posted) and runs `openPdf` of `pdfjs.ts`, the same code as in-thread
 * callers; its `PdfError`s come back as `PdfError`s with the same code, reason and message.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { ErrorCode } from '../../core/errors';
import { isThreadOutOfMemory, ThreadPool } from '../process/thread-pool';
import type { PdfDescription } from '../../domain/pdf/description';
import { PdfError, type PdfErrorReason } from '../../domain/pdf/errors';
import type { PageLayout } from '../../domain/pdf/markdown/types';
import { openPdf } from './pdfjs';
import type { PageDrawings } from '../../domain/pdf/drawings';

const THREAD_ENTRY = new URL('./pdfjs.thread.mjs', import.meta.url);

/** Limit for opening a document (and for describing it) when the caller gives none. */
const DEFAULT_OPEN_TIMEOUT_MS = 60_000;
/** What reading a page may take on average, on top of opening; a smaller opening limit scales it down with it. */
const PAGE_BUDGET_MS = 5_000;

/** What a thread is asked to do (one message). */
export type PdfThreadRequest =
  | { operation: 'describe'; pdfPath: string; timeoutMs: number }
  | { operation: 'page-texts'; pdfPath: string; pages: number[]; timeoutMs: number }
  | { operation: 'page-drawings'; pdfPath: string; pages: number[]; timeoutMs: number };

/** A thread's answer: the result, or the error as plain data (`code` and `reason` when it was a `PdfError`). */
export type PdfThreadReply =
  | { result: PdfDescription | string[] | PageLayout[] | PageDrawings[] }
  | { error: { message: string; code?: ErrorCode; reason?: PdfErrorReason } };

export interface PdfThreadOptions {
  signal?: AbortSignal;
  /** Limit for opening the document in milliseconds (default 60 000); reading pages adds a budget per page. */
  timeoutMs?: number;
}

/** Heap a pdf.js thread may use: far above real documents (a 200-page text PDF needs well under 100 MB). */
const THREAD_HEAP_MB = 1024;

const pool = new ThreadPool(THREAD_ENTRY, {
  maxThreads: Math.max(1, os.availableParallelism()),
  idleMs: 60_000,
  resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
});

/** Threads working on a call now (for tests: a call that ends by timeout or abort leaves none behind). */
export const pdfjsThreadsRunning = (): number => pool.busy;

/** The work of one request, run by `pdfjs.thread.mjs` inside the thread; never throws. */
export async function answerPdfRequest(request: PdfThreadRequest): Promise<PdfThreadReply> {
  try {
    const doc = await openPdf(await readFile(request.pdfPath), { timeoutMs: request.timeoutMs });
    try {
      if (request.operation === 'describe') {
        const meta = await doc.metadata();
        return { result: { pageCount: doc.pageCount, title: meta.title, author: meta.author } };
      }
      if (request.operation === 'page-drawings') {
        const drawings: PageDrawings[] = [];
        for (const page of request.pages) drawings.push(await doc.pageDrawings(page));
        return { result: drawings };
      }
      const texts: string[] = [];
      for (const page of request.pages) texts.push((await doc.pageText(page)).text);
      return { result: texts };
    } finally {
      await doc.close();
    }
  } catch (err) {
    if (err instanceof PdfError) return { error: { message: err.message, code: err.code, reason: err.reason } };
    return { error: { message: err instanceof Error ? err.message : String(err) } };
  }
}

function replyError(error: { message: string; code?: ErrorCode; reason?: PdfErrorReason }): Error {
  return error.code && error.reason ? new PdfError(error.code, error.reason, error.message) : new Error(error.message);
}

/**
 * Runs one request on a pool thread. Past `limitMs` the thread is terminated and the call rejects with `PdfError`
 * `UNPROCESSABLE_INPUT`/`timeout`; an abort of `signal` terminates it and rejects with `signal.reason`.
 */
async function runInThread<T>(request: PdfThreadRequest, limitMs: number, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  const limit = new AbortController();
  const timer = setTimeout(
    () => limit.abort(new PdfError('UNPROCESSABLE_INPUT', 'timeout', `Reading the PDF took longer than ${limitMs} ms`)),
    limitMs,
  );
  try {
    const reply = await pool
      .run<PdfThreadReply>(request, signal ? AbortSignal.any([signal, limit.signal]) : limit.signal)
      .catch((e: unknown) => {
        if (isThreadOutOfMemory(e))
          throw new PdfError(
            'UNPROCESSABLE_INPUT',
            'too_large',
            `Reading the PDF needs more than ${THREAD_HEAP_MB} MB of memory`,
            { cause: e },
          );
        throw e;
      });
    if ('error' in reply) throw replyError(reply.error);
    return reply.result as T;
  } finally {
    clearTimeout(timer);
  }
}

/** Page count, title and author through pdf.js in a thread; the limit covers starting the thread and opening. */
export function describeInThread(pdfPath: string, opts: PdfThreadOptions = {}): Promise<PdfDescription> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  return runInThread<PdfDescription>({ operation: 'describe', pdfPath, timeoutMs }, timeoutMs, opts.signal);
}

/**
 * The text of each asked page (1-based) through pdf.js in a thread, the document opened once. The limit is the
 * opening limit plus a budget per page: `timeoutMs + pages × min(5 000, timeoutMs)`.
 */
export async function pageTextsInThread(
  pdfPath: string,
  pages: readonly number[],
  opts: PdfThreadOptions = {},
): Promise<Map<number, string>> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  const limitMs = timeoutMs + pages.length * Math.min(PAGE_BUDGET_MS, timeoutMs);
  const texts = await runInThread<string[]>(
    { operation: 'page-texts', pdfPath, pages: [...pages], timeoutMs },
    limitMs,
    opts.signal,
  );
  return new Map(pages.map((page, i) => [page, texts[i]]));
}

/**
 * Each asked page's drawings (rulings, bullet marks) through pdf.js in a thread, for a file our content-stream reader
 * (`content-drawings.ts`) leaves to pdf.js. Same limits as `pageTextsInThread`.
 */
export async function pageDrawingsInThread(
  pdfPath: string,
  pages: readonly number[],
  opts: PdfThreadOptions = {},
): Promise<Map<number, PageDrawings>> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  const limitMs = timeoutMs + pages.length * Math.min(PAGE_BUDGET_MS, timeoutMs);
  const drawings = await runInThread<PageDrawings[]>(
    { operation: 'page-drawings', pdfPath, pages: [...pages], timeoutMs },
    limitMs,
    opts.signal,
  );
  return new Map(pages.map((page, i) => [page, drawings[i]]));
}
