/**
 * The API's direct answer to a small `native` + `output_format=markdown` request (issue 25), read in a worker thread:
 * the text layer and the layouts at once (`readNativePages`, the `readPdfText` activity's code: `pdftotext` and
 * `pdftohtml -xml` as processes, the drawings from our content-stream reader), the Markdown rules and each page's
 * quality (`pagesMarkdown`, `finishPdf`'s code), and the result as the job stores it (`directPdfResult`: the `data`
 * bytes, handed back without a copy). None of it runs on the API's event loop: measured on the main thread, the
 * layout step alone stalled it up to 65 ms (asymptote.pdf, 196 pages) and handing 236 pages of layouts to a thread
 * 26–45 ms, the rules 50–170 ms (bench/README.md).
 *
 * A small pool (one thread per core at most; the API runs at most one direct read per media slot), its threads kept
 * (the API starts one at start: `warmNativeMarkdownThread`). An abort terminates the thread: its `pdftotext` processes go with the
 * launcher, whose lifeline (stdin) closes; `pdftohtml` with its output pipe.
 */
import os from 'node:os';
import { AppError, isErrorCode, type ErrorCode } from '../../core/errors';
import type { TableFormatName } from '../../core/jobs/job-defaults';
import { directPdfResult, pdfPageEntry, type DirectPdfResult } from '../../core/results/pdf-text';
import { ThreadPool } from '../process/thread-pool';
import { createPdfEngine } from './engine';
import { PdfError, type PdfErrorReason } from '../../domain/pdf/errors';
import { pagesMarkdown } from '../../domain/pdf/markdown/pages';
import { readNativePages } from '../../domain/pdf/native-pages';
import { documentChunks, type ChunkParams } from '../../domain/chunks/options';

const THREAD_ENTRY = new URL('./native-markdown.thread.mjs', import.meta.url);

/** What a thread is asked: the checked document (`pdfinfo`'s facts and the pages to read) and how many processes. */
export interface NativeMarkdownRequest {
  pdfPath: string;
  meta: { pageCount: number; title: string; author: string; pages: number[] };
  parallel: number;
  /** `table_format` (contract §13). */
  tableFormat?: TableFormatName;
  /** `chunking=true` and its options (contract §14): the chunks are cut here too, as the job's last step cuts them. */
  chunks?: ChunkParams;
}

export type NativeMarkdownReply =
  { result: DirectPdfResult } | { error: { message: string; code?: ErrorCode; details?: Record<string, unknown> } };

/** The work of one request, run by `native-markdown.thread.mjs` inside the thread; never throws. */
export async function answerNativeMarkdown(request: NativeMarkdownRequest): Promise<NativeMarkdownReply> {
  try {
    const { pdfPath, meta, parallel, tableFormat } = request;
    const pages = await readNativePages(createPdfEngine('poppler'), pdfPath, meta.pages, { parallel, markdown: true });
    const md = pagesMarkdown(pages, { tableFormat });
    // The pages as the Markdown holds them, with their blocks' boxes (activities/pdf-results.ts cuts the same way).
    const parts = pages.map((c, i) => ({ page: c.page, text: md.pages[i].markdown, blocks: md.pages[i].blocks }));
    return {
      result: directPdfResult(
        meta,
        pages.map((c, i) => pdfPageEntry(c, md.pages[i])),
        md.markdown,
        request.chunks ? documentChunks(md.markdown, parts, request.chunks) : undefined,
      ),
    };
  } catch (err) {
    const e = err as { message?: string; code?: unknown; details?: Record<string, unknown> };
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof AppError) return { error: { message, code: err.code, details: err.details } };
    return { error: { message: e?.message ?? message } };
  }
}

// Threads are kept, as the HTML pool's are: a new one costs 0.5–0.8 s to start (tsx and the modules load), more than a
// job's overhead. At most one per core: the API reads at most one document per media slot itself.
const pool = new ThreadPool(THREAD_ENTRY, { maxThreads: Math.max(1, os.availableParallelism()) });

/** Starts a thread (its modules loaded) before the first request needs it; reads nothing. */
export async function warmNativeMarkdownThread(): Promise<void> {
  await pool.run({ warm: true });
}

/** Threads reading now (tests: none is left behind after a request). */
export const nativeMarkdownThreadsBusy = (): number => pool.busy;
/** Requests the threads have answered in this process (tests: the Markdown was made in a thread). */
export const nativeMarkdownThreadRuns = (): number => pool.runs;

/**
 * The {@link DirectPdfResult} of a `native` Markdown read of `meta.pages`, made in a pool thread. Rejects with the
 * activity's errors (`PdfError`, `AppError`: the same code, message and details); an abort of `signal` terminates the
 * thread and rejects with its reason.
 */
export async function nativeMarkdownInThread(
  pdfPath: string,
  meta: NativeMarkdownRequest['meta'],
  opts: { signal?: AbortSignal; parallel?: number; tableFormat?: TableFormatName; chunks?: ChunkParams },
): Promise<DirectPdfResult> {
  const request: NativeMarkdownRequest = {
    pdfPath,
    meta,
    parallel: opts.parallel ?? 1,
    ...(opts.tableFormat ? { tableFormat: opts.tableFormat } : {}),
    ...(opts.chunks?.chunking === true ? { chunks: opts.chunks } : {}),
  };
  const reply = await pool.run<NativeMarkdownReply>({ ...request }, opts.signal);
  if ('error' in reply) {
    const { message, code, details } = reply.error;
    if (code && isErrorCode(code)) {
      const reason = details?.reason as PdfErrorReason | undefined;
      throw reason ? new PdfError(code, reason, message) : new AppError(code, message, details ?? {});
    }
    throw new Error(message);
  }
  const r = reply.result;
  // Posted as a transferred buffer: a view on it, no copy.
  return { ...r, data: Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength) };
}
