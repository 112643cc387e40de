/**
 * Patch ids of workflow changes that running workflows must survive (`patched(id)`), in one place. The lifecycle
 * of each is in docs/operations.md ("Changing workflow code"): patched → deprecatePatch once no run that took the
 * old branch can be open → removed.
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
 * job's step waits at most about a page for a slot (core/jobs/fanout.ts PDF_PAGE_GROUP_FINE). Before: two pages (four).
 */
export const OCR_FINE_GROUPS = 'ocr-fine-groups';

/**
 * A batch counts the jobs it started by their child-completion events (already in its history) instead of a
 * `jobFinished` signal from each: their input says so (`reportsByCompletion`), and the batch continues as new only
 * once every child of its run has closed, so no child's close goes to a closed run. Saves per job a workflow task
 * and two events, and the batch an event and a task per job. Restarted runs still signal.
 */
export const BATCH_COUNTS_COMPLETIONS = 'batch-counts-completions';

/**
 * A small HTML conversion (`html-to-markdown`, `extract-tables` of inline HTML up to SMALL_TRANSFORM_CHARS) runs as a
 * local activity in the job's first workflow task: the job completes in one task instead of two (no dispatch of the
 * step, no second trip through matching). Larger pages stay regular activities (a conversion of seconds must not hold
 * the workflow task).
 */
export const SMALL_TRANSFORM_IN_TASK = 'small-transform-in-task';

/**
 * A batch counts a job whose start it finds already done (WorkflowExecutionAlreadyStarted: a reset of the batch
 * replays it from before its starts, the jobs its earlier run started still run or have ended) by the job's end
 * (`awaitJobEnd`), instead of waiting for a close that never comes to this run (the batch stayed `processing`).
 */
export const BATCH_ADOPTS_STARTED = 'batch-adopts-started-jobs';

/**
 * fail-all waits for the starts of children in flight before it sends them `failJob`: a signal sent before the
 * child exists is lost, and the job ran on while fail-all counted it as failed.
 */
export const FAIL_ALL_AWAITS_STARTS = 'fail-all-awaits-starts';

/**
 * A summary job runs its model calls in child workflows of at most SUMMARY_SLICE_CALLS calls each
 * (`summaryCallsWorkflow`, workflows/pipelines/summary-slices.ts), level by level, instead of every call in its own
 * history: a 1,000-session event summary had about 4,500 events, and the history grew with the sessions towards
 * Temporal's limit.
 */
export const SUMMARY_SLICES = 'summary-slices';

/**
 * Downloads into a job (`fetchImage`, `fetchVideoInput`, `fetchSessionPage`, `fetchSessionAttachments`) go to the
 * download queue, whose slots are their own, instead of the io queue, where an hour-long download held a slot that
 * bookkeeping (records, webhooks, batch reports) needed.
 */
export const DOWNLOAD_QUEUE = 'download-queue';
