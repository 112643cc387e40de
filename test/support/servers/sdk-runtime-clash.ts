// Run as its own process (a Temporal SDK runtime is installed once per process): holds a loopback port, installs the
// runtime through `installSdkRuntime` with a chooser that offers the held port first (another process binding the
// port found free, between the check and the exporter's bind), and prints where the exporter ended up and whether it
// serves. Used by test/integration/metrics.test.ts.
import net from 'node:net';
import { Runtime } from '@temporalio/worker';
import { loadConfig } from '../../../core/config/config';
import { freeLoopbackPort, installSdkRuntime } from '../../../worker/metrics-listener';

const holder = net.createServer();
await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
const held = (holder.address() as net.AddressInfo).port;
const offered: number[] = [];
const address = await installSdkRuntime(
  loadConfig({ WORKER_METRICS_PORT: '0' }),
  (telemetry) => Runtime.install({ telemetryOptions: telemetry }),
  async () => {
    const port = offered.length === 0 ? held : await freeLoopbackPort();
    offered.push(port);
    return port;
  },
);
const res = await fetch(`http://${address}/metrics`);
process.stdout.write(JSON.stringify({ held, offered, address, status: res.status }) + '\n');
holder.close();
process.exit(0);
