import http from 'node:http';
import net from 'node:net';
import type { Config } from '../core/config/config';
import type { Logger } from '../core/runtime/logger';
import { enableProcessMetrics, METRICS_CONTENT_TYPE, metricsText } from '../core/runtime/metrics';

export interface WorkerMetrics {
  /** The listener's URL (`http://127.0.0.1:9464/metrics`). */
  url: string;
  close(): Promise<void>;
}

/** A free port on the loopback interface (bound, read, released): the Temporal SDK's exporter binds it next. */
export async function freeLoopbackPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

type SdkTelemetry = { metrics?: { prometheus: { bindAddress: string; useSecondsForDurations: boolean } } };

/**
 * Installs the Temporal SDK's runtime (`install` is `Runtime.install` with the rest of its options) and returns the
 * address of its Prometheus exporter, if any. With `WORKER_METRICS_PORT` set, the exporter (its own HTTP server) goes
 * on a free loopback port, only ever read by this worker's listener, which serves it after our own metrics. A port
 * found free is only a hint: when another process binds it before the exporter does (`Address already in use`), the
 * install is tried again on another one (up to 5 times), instead of the worker dying at every start of a busy box.
 */
export async function installSdkRuntime(
  config: Config,
  install: (telemetry: SdkTelemetry) => void,
  choosePort: () => Promise<number> = freeLoopbackPort,
): Promise<string | undefined> {
  if (config.WORKER_METRICS_PORT === undefined) {
    install({});
    return undefined;
  }
  for (let attempt = 1; ; attempt++) {
    const bindAddress = `127.0.0.1:${await choosePort()}`;
    try {
      install({ metrics: { prometheus: { bindAddress, useSecondsForDurations: true } } });
      return bindAddress;
    } catch (err) {
      if (attempt >= 5 || !/address already in use/i.test((err as Error).message)) throw err;
    }
  }
}

/**
 * The worker's `GET /metrics` on `WORKER_METRICS_HOST:WORKER_METRICS_PORT` (loopback by default; no key: keep it off
 * public interfaces): this process's metrics (core/runtime/metrics.ts) followed by the Temporal SDK's (`temporal_*`, read from
 * the exporter `sdkMetricsTelemetry` configured). Undefined when `WORKER_METRICS_PORT` is not set.
 */
export async function startWorkerMetrics(
  config: Config,
  logger: Logger,
  sdkAddress: string | undefined,
): Promise<WorkerMetrics | undefined> {
  if (config.WORKER_METRICS_PORT === undefined) return undefined;
  enableProcessMetrics();
  const sdk = async (): Promise<string> => {
    if (!sdkAddress) return '';
    try {
      const res = await fetch(`http://${sdkAddress}/metrics`, { signal: AbortSignal.timeout(5000) });
      return res.ok ? await res.text() : '';
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'Temporal SDK metrics unavailable');
      return '';
    }
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    Promise.all([metricsText(), sdk()]).then(
      ([own, temporal]) =>
        res
          .writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' })
          .end(temporal ? `${own}\n${temporal}` : own),
      (err: unknown) => {
        logger.error({ err }, 'metrics failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(config.WORKER_METRICS_PORT, config.WORKER_METRICS_HOST, resolve),
  );
  const { port } = server.address() as net.AddressInfo;
  const host = config.WORKER_METRICS_HOST.includes(':')
    ? `[${config.WORKER_METRICS_HOST}]`
    : config.WORKER_METRICS_HOST;
  const url = `http://${host}:${port}/metrics`;
  logger.info({ url, port }, 'worker metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
