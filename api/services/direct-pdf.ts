import type { Context } from 'koa';
import { mediaSlots, type Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { countPdfPage } from '../../core/runtime/metrics';
import { idleCores, pdfPagesToRead, type DirectPdfResult } from '../../core/results/pdf-text';
import { countPdfLookup, nativeTextResult, pdfKey, rememberDirectPdf } from '../../capabilities/pdf';
import type { ChunkParams } from '../../capabilities/chunks';
import { chunkParamsOf } from '../../core/jobs/job-defaults';
import type { ApiEngines } from '../engines';
import { uploadSha256, type UploadedFile } from '../uploads';
import type { AsyncPreference } from './async-preference';
import { answerPdfFromCache } from './direct-answer';
import type { JobService } from './jobs';

export interface DirectPdfDeps {
  jobs: JobService;
  config: Pick<Config, 'INLINE_PDF_MAX_PAGES' | 'MAX_PDF_PAGES' | 'PDF_TEXT_ENGINE' | 'llm' | 'MEDIA_CONCURRENCY'>;
  engines: Pick<ApiEngines, 'describePdf' | 'readPdfTextUpTo' | 'readPdfPageTexts' | 'readPdfMarkdown'>;
}

/**
 * How many cores the last minute left idle (`idleCores`), which picks how the text layer is read; a test sets it to
 * run each way on any machine.
 */
export const directPdfReading = { idleCores };

const PREFIX = Buffer.from('{"status":"success","data":');
const SUFFIX = Buffer.from('}');

/**
 * Whether a `/api/pdf/process` upload may be answered without a job (issue 24), before its document is read: a
 * `native` request, text or Markdown (issue 25), without template or page images, on the poppler text engine,
 * without chunks of the plain text (chunks of the Markdown are cut in its thread), `INLINE_PDF_MAX_PAGES` above 0,
 * and a client that did not ask for a job (`Prefer: respond-async`, `wait_ms`: as the transformer's direct path, a
 * client that names a wait gets a job).
 */
export function mayAnswerPdfDirectly(
  ctx: Context,
  config: DirectPdfDeps['config'],
  p: Record<string, unknown>,
): boolean {
  const prefer = ctx.state.prefer as AsyncPreference | undefined;
  if (prefer?.respondAsync || prefer?.waitMs !== undefined) return false;
  if (config.INLINE_PDF_MAX_PAGES <= 0 || config.PDF_TEXT_ENGINE !== 'poppler') return false;
  // Chunks (contract §14) of the Markdown are cut in the Markdown's thread; those of the plain text by the job's last
  // step (a hit is still answered).
  const chunks = p.chunking === true && p.output_format !== 'markdown';
  return p.extraction_method === 'native' && !p.template && !p.includeImages && !chunks;
}

/**
 * The cache writes of direct answers still in progress, by cache key: a request for the same key in this process waits
 * for them before it looks for a hit, so a repeat right after an answer is a hit. Elsewhere (a job, another API
 * process) an entry not written yet is a miss, which reads the document again: the same answer.
 */
const pendingWrites = new Map<string, Promise<void>>();

/** Direct reads running in this process: at most one per media slot (`mediaSlots`), as the worker's media queue. */
let directReads = 0;

/**
 * Answers a small synchronous `native` PDF request, text or Markdown, without a job (issues 24, 25), from the upload's temporary file (removed
 * by the body middleware when the request ends): no upload to the blob store, no scratch copy, no trip through
 * Temporal. Call only when {@link mayAnswerPdfDirectly}. In order:
 * - a cache hit (unless `use_cache` is false) is streamed from the entry, as `answerPdfFromCache` answers it;
 * - past one direct read per media slot (`MEDIA_CONCURRENCY`, default one per core) running in this process: false,
 *   and the request runs as a job (queued on the worker's media slots), so the API's cores stay bounded;
 * - a heavy-request slot is taken (429 when the bound is full), held until the answer is sent;
 * - `pdfinfo` checks the document (the activity's errors: 400 not a PDF, 422 encrypted, corrupt or empty) and the
 *   page limit and range (`MAX_PDF_PAGES`, `page_start`/`page_end`: 400, the activity's message and details);
 * - `pdftotext` reads the range: with two or more idle cores (`idleCores`) after `pdfinfo`, split across them as the
 *   activity does; else in one process started beside `pdfinfo` (at most `INLINE_PDF_MAX_PAGES` pages, the count not
 *   known yet), which a refusal kills;
 * - more than `INLINE_PDF_MAX_PAGES` pages to read: false, and the caller runs the job as before;
 * - `output_format=markdown` (issue 25): no `pdftotext` beside `pdfinfo`; after it, `readPdfMarkdown` reads the text
 *   layer and the layouts at once in a worker thread, which builds the Markdown, the page qualities and the stored
 *   result there (the job's code), so nothing of it runs on this event loop;
 * - the text and metadata are built by the activity's code (core/results/pdf-text.ts), so `data` is the job's;
 * - the result is stored as the job path stores it (the `data` bytes, the job fields, `result.md`) under
 *   `cache/files/`, and the cache entry points at it: a later request is a hit, here or in a job (which copies it).
 *   The writes run on after the answer is sent (a failed one is logged: the next request reads the document again).
 * Errors carry no `details.job_id` (there is no job); otherwise their envelopes are the job path's.
 */
export async function answerPdfDirectly(
  ctx: Context,
  deps: DirectPdfDeps,
  file: UploadedFile,
  p: Record<string, unknown>,
): Promise<boolean> {
  const { config, jobs } = deps;
  const sha256 = await uploadSha256(file);
  const key = pdfKey(sha256, p, { textEngine: config.PDF_TEXT_ENGINE, visionModel: config.llm?.visionModel });
  const pending = key ? pendingWrites.get(key) : undefined;
  if (pending) await pending.catch(() => undefined);
  if (await answerPdfFromCache(ctx, deps, sha256, p)) return true;
  // The API's cores are bounded like the worker's: past one read per media slot, the request queues as a job.
  if (directReads >= mediaSlots(config)) return false;
  jobs.heavy.enter(ctx);
  directReads += 1;
  try {
    return await readDirectly(ctx, deps, file, p, key);
  } finally {
    directReads -= 1;
  }
}

async function readDirectly(
  ctx: Context,
  deps: DirectPdfDeps,
  file: UploadedFile,
  p: Record<string, unknown>,
  key: string | null,
): Promise<boolean> {
  const { config, jobs, engines } = deps;
  const store = jobs.store;
  const markdown = p.output_format === 'markdown';
  // Killed when the client goes away, or when the document is refused or goes to a job.
  const stop = new AbortController();
  const onClose = () => stop.abort(new Error('client closed the request'));
  ctx.res.once('close', onClose);
  const first = typeof p.page_start === 'number' ? p.page_start : 1;
  const upTo = Math.min(
    typeof p.page_end === 'number' ? p.page_end : Number.MAX_SAFE_INTEGER,
    first + config.INLINE_PDF_MAX_PAGES - 1,
  );
  // Two idle cores or more: pdfinfo first, then the range split across them (the activity's way: 70 against 80 ms for
  // the 200-page bench file, measured in the bench's small process). Else one pdftotext starts beside pdfinfo, before
  // the count is known. The tools are started by the tool launcher (providers/process/launcher.ts), not forked from
  // this 200–300 MB process, whose every fork stalled the event loop 4–13 ms (bench/README.md, issue 24). Markdown
  // (issue 25): after pdfinfo, the text layer and the layouts are read at once in a worker thread, which builds the
  // Markdown and the stored result there (`readPdfMarkdown`).
  const parallel = directPdfReading.idleCores();
  const reading =
    parallel > 1 || markdown ? null : engines.readPdfTextUpTo(file.filepath, first, upTo, { signal: stop.signal });
  // Handled at once (a damaged file fails it before pdfinfo answers); awaited below.
  reading?.catch(() => undefined);
  let result: DirectPdfResult;
  let pages: number;
  try {
    const desc = await engines.describePdf(file.filepath, { signal: stop.signal });
    const toRead = pdfPagesToRead(desc.pageCount, p, config.MAX_PDF_PAGES);
    if (!toRead.ok) throw new AppError(toRead.code, toRead.message, toRead.details);
    if (toRead.pages.length > config.INLINE_PDF_MAX_PAGES) return false;
    const meta = { pageCount: desc.pageCount, title: desc.title, author: desc.author, pages: toRead.pages };
    pages = meta.pages.length;
    if (markdown) {
      const tableFormat = p.table_format === 'gfm' ? ('gfm' as const) : undefined;
      result = await engines.readPdfMarkdown(file.filepath, meta, {
        signal: stop.signal,
        parallel,
        tableFormat,
        chunks: chunkParamsOf(p as ChunkParams),
      });
    } else {
      const texts = reading
        ? await reading
        : await engines
            .readPdfPageTexts(file.filepath, meta.pages, { signal: stop.signal, parallel })
            .then((m) => meta.pages.map((page) => m.get(page) ?? ''));
      // pdftotext read from `first` to the range's end (or the document's): exactly the pages to read.
      result = nativeTextResult(meta, texts);
    }
  } finally {
    ctx.res.off('close', onClose);
    // Settled before the answer: no pdftotext outlives its request.
    stop.abort(new Error('not needed'));
    await reading?.catch(() => undefined);
  }
  countPdfPage('native', pages);
  if (key) {
    if (p.use_cache !== false) countPdfLookup(false);
    const log = ctx.state.log as { warn(o: object, m: string): void } | undefined;
    const writing = rememberDirectPdf(store, key, result)
      .catch((err: unknown) => log?.warn({ err }, 'direct PDF result not cached'))
      .finally(() => {
        if (pendingWrites.get(key) === writing) pendingWrites.delete(key);
      });
    pendingWrites.set(key, writing);
  }
  ctx.set('X-Cache', 'miss');
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = Buffer.concat([PREFIX, result.data, SUFFIX]);
  return true;
}
