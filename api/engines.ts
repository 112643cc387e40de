import type { HtmlOperation, HtmlOutcome } from '../core/html/outcome';
import type { TableFormatName } from '../core/jobs/job-defaults';
import type { MediaProbe } from '../core/jobs/media-formats';
import type { DirectPdfResult } from '../core/results/pdf-text';
import type { ChunkParams } from '../domain/chunks/options';

/** What the API needs to know of a PDF before reading its text layer (providers/pdf `PdfDescription`). */
export interface ApiPdfDescription {
  pageCount: number;
  title: string;
  author: string;
}

/**
 * The engines the API runs itself: on an upload, to refuse it before any job exists (a file that is not audio, a
 * decompression bomb), and for `/api/health`. The API imports no provider: the composition root (api/main.ts) builds
 * these from them and hands them to `createApp`, as worker/main.ts builds the activities' engines. Everything else
 * runs in the worker, except small pure transforms (`transformHtml`) and the text layer of small PDFs (`describePdf`,
 * `readPdfTextUpTo`, `readPdfPageTexts`), with their Markdown (`readPdfMarkdown`).
 */
export interface ApiEngines {
  /** ffprobe: the container, duration and first streams of a media file, from its content (`INVALID_FORMAT` else). */
  probeMedia(file: string, opts?: { timeoutMs?: number }): Promise<MediaProbe>;
  /** An image's width and height from its first megabyte (no pixel decoded); null when the header lies further in. */
  imageSize(file: string): Promise<{ width: number; height: number } | null>;
  /** The languages tesseract has installed; rejects when tesseract cannot be run. */
  ocrLanguages(): Promise<ReadonlySet<string>>;
  /** Resolves when hosted video downloads can run (yt-dlp is installed); else 503 `PROVIDER_NOT_CONFIGURED`. */
  checkHostedVideo(): Promise<void>;
  /**
   * An HTML operation (core/html/run.ts `runHtmlOperation`) in a worker thread, never on the API's event loop:
   * the same code the transformer activity runs. Rejects with `HtmlTooDeepError` (422) for a page nested too deeply.
   */
  transformHtml(operation: HtmlOperation, html: string, signal?: AbortSignal): Promise<HtmlOutcome>;
  /**
   * poppler's `pdfinfo` as a process (started by the tool launcher), as the `readPdfText` activity runs it: the page count, title and author
   * of a readable PDF. Rejects with the activity's `PdfError`s (`INVALID_FORMAT` not a PDF; `UNPROCESSABLE_INPUT`
   * encrypted, corrupt, empty).
   */
  describePdf(file: string, opts: { signal?: AbortSignal }): Promise<ApiPdfDescription>;
  /**
   * poppler's `pdftotext` as a child process (the code the activity runs, in one process): the text layer of pages
   * `first..last`, or up to the document's last page when it ends before, one entry per page read. It may start
   * before `describePdf` answers. The signal kills the process.
   */
  readPdfTextUpTo(file: string, first: number, last: number, opts: { signal?: AbortSignal }): Promise<string[]>;
  /**
   * poppler's `pdftotext` as child processes, the range split across `parallel` of them, as the activity runs it: the
   * text layer of each asked page, '' for a page without one. The signal kills the processes.
   */
  readPdfPageTexts(
    file: string,
    pages: readonly number[],
    opts: { signal?: AbortSignal; parallel?: number },
  ): Promise<Map<number, string>>;
  /**
   * A small `native` + `output_format=markdown` read (issue 25) in a worker thread, never on the API's event loop: the
   * text layer (`pdftotext`) and the layouts (`pdftohtml -xml`, the drawings from the content streams) of `meta.pages`
   * read at once, the Markdown rules and each page's quality, and the result as a job stores it, all by the code the
   * pdf job runs. Rejects with the activity's errors; the signal terminates the thread (and its processes).
   */
  readPdfMarkdown(
    file: string,
    meta: { pageCount: number; title: string; author: string; pages: number[] },
    opts: { signal?: AbortSignal; parallel?: number; tableFormat?: TableFormatName; chunks?: ChunkParams },
  ): Promise<DirectPdfResult>;
}
