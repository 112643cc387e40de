/**
 * The page range rule of every PDF endpoint (contract §6): `page_start` and `page_end` are 1-indexed and inclusive;
 * `page_start` defaults to 1, `page_end` to the last page and is cut to it. `page_end < page_start` is refused as
 * soon as the request arrives, `page_start > page_count` once the document's page count is known. Every place that
 * checks or resolves a range (the routes, the job parameters, the PDF activities) calls `pageRange`. Pure: the
 * workflows may import it.
 */

/** Why a range is refused, as a `details.issues` entry of a VALIDATION_ERROR. */
interface PageRangeIssue {
  path: 'page_start' | 'page_end';
  message: string;
}

/** The pages to read, `first..last` (`last` is absent when neither `page_end` nor a page count is known). */
type PageRange = { ok: true; first: number; last?: number } | { ok: false; issue: PageRangeIssue };

const isPage = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;

/**
 * Checks a requested range and resolves it against `pageCount` when that is known. Absent values (`undefined`,
 * `null`) take their defaults; a present value must be a whole number from 1.
 */
export function pageRange(req: { page_start?: unknown; page_end?: unknown }, pageCount?: number): PageRange {
  const start = req.page_start ?? 1;
  const end = req.page_end ?? undefined;
  if (!isPage(start))
    return { ok: false, issue: { path: 'page_start', message: 'page_start must be a whole number from 1' } };
  if (end !== undefined && !isPage(end))
    return { ok: false, issue: { path: 'page_end', message: 'page_end must be a whole number from 1' } };
  if (end !== undefined && end < start)
    return { ok: false, issue: { path: 'page_end', message: `page_end (${end}) is before page_start (${start})` } };
  if (pageCount === undefined) return { ok: true, first: start, ...(end !== undefined ? { last: end } : {}) };
  if (start > pageCount)
    return { ok: false, issue: { path: 'page_start', message: `the document has ${pageCount} pages` } };
  return { ok: true, first: start, last: Math.min(end ?? pageCount, pageCount) };
}
