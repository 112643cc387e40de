import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../../core/stores/blob-store';
import { SERVICE_NAME, SERVICE_VERSION } from '../../core/runtime/version';
import type { pingWorkflow } from '../../workflows/ping.workflow';
import { describePollers, type TemporalGateway } from '../temporal';

type CheckStatus = 'ok' | 'degraded' | 'unavailable';

export interface Check {
  status: CheckStatus;
  message?: string;
  latency_ms?: number;
  [k: string]: unknown;
}

export interface HealthReport {
  status: CheckStatus;
  service: string;
  version: string;
  timestamp: string;
  checks: { temporal: Check; storage: Check; worker: Check; providers: Record<string, Check>; workflow?: Check };
}

const CHECK_TIMEOUT_MS = 2500;

/**
 * How long a full report answers callers without the key (contract §11: "a probe cached for a few seconds"): however
 * often they call, storage and Temporal see at most one probe per this long from them.
 */
export const HEALTH_CACHE_MS = 3000;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const t0 = performance.now();
  try {
    const value = await fn();
    return { ms: Math.round(performance.now() - t0), value };
  } catch (error) {
    return { ms: Math.round(performance.now() - t0), error };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]);
}

const reason = (e: unknown) => (e instanceof Error ? e.message.split('\n')[0].slice(0, 200) : 'unreachable');

/**
 * Contract §10, §11: real checks of Temporal (a system-info call), storage (a write and delete), and workers (pollers
 * on the io, media and llm task queues). `probe` additionally runs a workflow through the io and media queues end to
 * end. Callers with the key get `report` (live, every call); others get `status`: the Temporal probe's last word
 * (api/temporal.ts, no I/O) and the last report, refreshed at most once per `cacheMs` whoever asks.
 */
export class HealthService {
  private probing: Promise<Check> | null = null;
  private last: { at: number; report: HealthReport } | undefined;
  private refreshing: Promise<HealthReport> | null = null;

  constructor(
    private readonly temporal: TemporalGateway,
    private readonly store: BlobStore,
    private readonly providers: () => Record<string, Check> | Promise<Record<string, Check>> = () => ({}),
    private readonly cacheMs = HEALTH_CACHE_MS,
  ) {}

  /**
   * The status alone, for a caller without the key: `unavailable` at once while the reachability probe finds Temporal
   * unreachable, otherwise the status of the last report younger than `cacheMs` (concurrent callers of a stale one
   * share one refresh).
   */
  async status(): Promise<CheckStatus> {
    if (!this.temporal.isReachable()) return 'unavailable';
    const last = this.last;
    if (last && Date.now() - last.at < this.cacheMs) return last.report.status;
    this.refreshing ??= this.report().finally(() => {
      this.refreshing = null;
    });
    return (await this.refreshing).status;
  }

  async report(opts: { probe?: boolean } = {}): Promise<HealthReport> {
    const deadline = () => Date.now() + CHECK_TIMEOUT_MS;
    const [t, s, providers] = await Promise.all([
      timed(() =>
        this.temporal.connection.withDeadline(deadline(), () =>
          this.temporal.connection.workflowService.getSystemInfo({}),
        ),
      ),
      timed(() => withTimeout(this.store.check(), CHECK_TIMEOUT_MS, 'storage')),
      this.providers(),
    ]);
    const temporal: Check = t.error
      ? { status: 'unavailable', message: reason(t.error), latency_ms: t.ms }
      : { status: 'ok', latency_ms: t.ms, server_version: t.value?.serverVersion || undefined };
    const storage: Check = s.error
      ? { status: 'unavailable', message: reason(s.error), latency_ms: s.ms, backend: this.store.kind }
      : { status: 'ok', latency_ms: s.ms, backend: this.store.kind };
    const worker =
      temporal.status === 'ok'
        ? await this.workerCheck()
        : { status: 'unavailable' as const, message: 'Temporal is unreachable' };
    const checks: HealthReport['checks'] = { temporal, storage, worker, providers };
    if (opts.probe && temporal.status === 'ok') checks.workflow = await this.probe();
    let status: CheckStatus = 'ok';
    if (temporal.status !== 'ok' || storage.status !== 'ok') status = 'unavailable';
    else if (worker.status !== 'ok' || (checks.workflow && checks.workflow.status !== 'ok')) status = 'degraded';
    const report = {
      status,
      service: SERVICE_NAME,
      version: SERVICE_VERSION,
      timestamp: new Date().toISOString(),
      checks,
    };
    this.last = { at: Date.now(), report };
    return report;
  }

  private async workerCheck(): Promise<Check> {
    const q = this.temporal.queues;
    const r = await timed(() =>
      this.temporal.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
        Promise.all([
          describePollers(this.temporal, q.io, 'workflow'),
          describePollers(this.temporal, q.io, 'activity'),
          describePollers(this.temporal, q.media, 'activity'),
          describePollers(this.temporal, q.llm, 'activity'),
        ]),
      ),
    );
    if (r.error) return { status: 'degraded', message: reason(r.error) };
    const [wf, io, media, llm] = r.value!;
    const missing = [wf, io, media, llm].filter((p) => p.pollers === 0).map((p) => `${p.taskQueue} (${p.kind})`);
    return {
      status: missing.length ? 'degraded' : 'ok',
      ...(missing.length ? { message: `no worker polls ${missing.join(', ')}` } : {}),
      pollers: {
        [`${q.io}:workflow`]: wf.pollers,
        [`${q.io}:activity`]: io.pollers,
        [`${q.media}:activity`]: media.pollers,
        [`${q.llm}:activity`]: llm.pollers,
      },
    };
  }

  /** Concurrent probes share one workflow run. */
  private probe(): Promise<Check> {
    this.probing ??= this.runProbe().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async runProbe(): Promise<Check> {
    const q = this.temporal.queues;
    const r = await timed(() =>
      this.temporal.client.workflow.execute<typeof pingWorkflow>('pingWorkflow', {
        taskQueue: q.io,
        workflowId: `health-probe-${randomUUID()}`,
        args: [{ ioQueue: q.io, mediaQueue: q.media }],
        workflowExecutionTimeout: '15s',
      }),
    );
    return r.error
      ? { status: 'degraded', message: reason(r.error), latency_ms: r.ms }
      : { status: 'ok', latency_ms: r.ms };
  }
}
