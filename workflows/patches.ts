/**
 * Patch ids of workflow changes that running workflows must survive (`patched(id)`), in one place. The lifecycle
 * of each is in README.md's operator guide: patched → deprecatePatch once no run that took the old branch can be
 * open → removed.
 */

/**
 * Webhook events go to the job's notifier workflow (delivered there, after the job's run may have ended) instead of
 * being delivered by the run itself, which held a failed job's run open for up to an hour of retries.
 */
export const WEBHOOK_NOTIFIER = 'webhook-notifier';

/**
 * A restarted run owns its record and its batch report: it writes its own record as its first step and tells its
 * batch it runs again (with its run number, so the batch ignores older runs' late reports). Before, the API did both
 * after starting the run, and a run that failed within that gap was overwritten back to pending.
 */
export const RUN_OWNS_RECORD = 'run-owns-record';

/**
 * OCR reads a page per activity (`combined` two): a big OCR job holds a media slot for one page at a time, so a small
 * job's step waits at most about a page for a slot (core/fanout.ts PDF_PAGE_GROUP_FINE). Before: two pages (four).
 */
export const OCR_FINE_GROUPS = 'ocr-fine-groups';
