import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The service's Prometheus metrics: every metric is declared here, and the rest of the code records through the
 * functions below (never through prom-client itself). One registry per process: the API serves it on `/metrics`,
 * a worker on its metrics listener (worker/metrics-listener.ts) together with the Temporal SDK's own metrics.
 *
 * Label values come from bounded sets only (route patterns, activity types, job types, cache operations, outcomes):
 * never a raw path, an id or a file name, so the number of series stays fixed however many requests are served.
 */
const metricsRegistry = new Registry();

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

const httpDuration = new Histogram({
  name: 'docproc_http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status, with the time until the handler answered (its _count is the number of requests)',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

const jobsFinished = new Counter({
  name: 'docproc_jobs_finished_total',
  help: 'Jobs that reached a terminal state, by job type and outcome (completed, failed)',
  labelNames: ['job_type', 'outcome'] as const,
  registers: [metricsRegistry],
});

const activityDuration = new Histogram({
  name: 'docproc_activity_duration_seconds',
  help: 'Activity executions (one per attempt) by activity type, task queue and outcome (ok, error, cancelled)',
  labelNames: ['activity', 'task_queue', 'outcome'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

const pdfPages = new Counter({
  name: 'docproc_pdf_pages_processed_total',
  help: 'PDF pages read by the text extraction, by the method that produced the text (native, local_ocr, vision_llm); pages reused from the cache or an earlier attempt are not counted',
  labelNames: ['method'] as const,
  registers: [metricsRegistry],
});

const audioSeconds = new Counter({
  name: 'docproc_audio_seconds_transcribed_total',
  help: 'Seconds of audio transcribed by the speech engine (chunks reused from an earlier attempt are not counted)',
  registers: [metricsRegistry],
});

const cacheLookups = new Counter({
  name: 'docproc_cache_lookups_total',
  help: 'Result-cache reads by cache operation and result (hit, miss)',
  labelNames: ['operation', 'result'] as const,
  registers: [metricsRegistry],
});

const webhookAttempts = new Counter({
  name: 'docproc_webhook_attempts_total',
  help: 'Webhook delivery attempts by event phase (processing, completed, failed) and outcome (delivered, retry, give-up)',
  labelNames: ['phase', 'outcome'] as const,
  registers: [metricsRegistry],
});

let processMetrics = false;

/** Adds the process metrics (CPU, memory, event loop lag, GC; `process_*`, `nodejs_*`) once per process. */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The exposition text of this process's metrics. */
export const metricsText = (): Promise<string> => metricsRegistry.metrics();

export const METRICS_CONTENT_TYPE = metricsRegistry.contentType;

export function observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
  httpDuration.observe({ method, route, status: String(status) }, seconds);
}

export function countJobFinished(jobType: string, outcome: 'completed' | 'failed'): void {
  jobsFinished.inc({ job_type: jobType, outcome });
}

export function observeActivity(
  activity: string,
  taskQueue: string,
  outcome: 'ok' | 'error' | 'cancelled',
  seconds: number,
): void {
  activityDuration.observe({ activity, task_queue: taskQueue, outcome }, seconds);
}

export function countPdfPage(method: string, pages = 1): void {
  pdfPages.inc({ method }, pages);
}

export function countAudioSeconds(seconds: number): void {
  if (seconds > 0) audioSeconds.inc(seconds);
}

export function countCacheLookup(operation: string, hit: boolean): void {
  cacheLookups.inc({ operation, result: hit ? 'hit' : 'miss' });
}

export function countWebhookAttempt(phase: string, outcome: string): void {
  webhookAttempts.inc({ phase, outcome });
}
