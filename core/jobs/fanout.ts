/**
 * How much work one job may have in flight at once. Pure constants shared by the workflows (which cannot read
 * config), the activities that report the bound to them and the config checks, so every side uses the same figures.
 */
import type { ExtractionMethod } from './job-defaults';

/** Temporal's default limit of pending activities (and of pending child workflows) per workflow run. */
export const TEMPORAL_PENDING_LIMIT = 2000;

/** Page groups (OCR, vision) or audio chunks one job keeps in flight per media slot of the worker that planned it. */
const FANOUT_PER_MEDIA_SLOT = 2;

/** The bound when the planning step did not report its slots (an activity of an older worker): 2 × 4 slots. */
export const DEFAULT_MEDIA_FANOUT = FANOUT_PER_MEDIA_SLOT * 4;

/** Model calls one summary job keeps in flight at once, however deep its map-reduce nests. */
export const MODEL_CALLS_PER_JOB = 8;

/** Attachments of one session read as child `pdf` jobs at once (each bounds its own pages). */
export const CHILD_JOBS_PER_SESSION = 2;

/** Pages per `extractPdfPages` activity by extraction method: text-layer reading is quick; OCR pages are spread. */
export const PDF_PAGE_GROUP = { native: 50, combined: 4, local_ocr: 2, vision_llm: 2 } as const satisfies Record<
  ExtractionMethod,
  number
>;

/**
 * Page groups of runs since the patch `ocr-fine-groups` (workflows/patches.ts): a page per OCR activity, two for
 * `combined`. A big job then holds a media slot for one page at a time, so another job's step waits at most about a
 * page's OCR for a slot (with groups of two it waited for two). The config check below keeps the coarser groups of
 * older runs, which scheduled every group at once.
 */
export const PDF_PAGE_GROUP_FINE = { native: 50, combined: 2, local_ocr: 1, vision_llm: 2 } as const satisfies Record<
  ExtractionMethod,
  number
>;

/** The smallest page group: a job of `MAX_PDF_PAGES` pages schedules at most `ceil(pages / this)` page activities. */
export const SMALLEST_PDF_PAGE_GROUP = Math.min(...Object.values(PDF_PAGE_GROUP));

/** Bound of page groups or chunks in flight for a job whose media worker reported `slots` (absent: the default). */
export const mediaFanout = (slots: number | undefined): number =>
  slots && slots > 0 ? Math.min(FANOUT_PER_MEDIA_SLOT * slots, TEMPORAL_PENDING_LIMIT - 100) : DEFAULT_MEDIA_FANOUT;
