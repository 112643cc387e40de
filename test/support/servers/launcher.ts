/**
 * A stack started by its launcher exactly as an operator starts it (`npm start`, `npm run cluster`), on ports and a
 * data directory of its own, found again through /proc (stack-procs.ts). `stop()` ends it with SIGTERM and waits for
 * every process of it to be gone; `killAll()` is the after-hook's last resort.
 */
import { freePort } from '../../../scripts/services.mjs';
import { spawnProc, type Proc } from './processes';
import { waitFor } from '../wait';
import { killAll, pidsOf, processesOf } from './stack-procs';

export interface Launched {
  proc: Proc;
  dataDir: string;
  /** The (first) API's base URL: as asked, or as the cluster's banner shows it (it may have moved). */
  url: string;
  /** The Temporal dev server's address (the port the launcher ended up with). */
  temporalAddress: string;
  /** The launcher's output so far. */
  output(): string;
  /** Pids of the stack's processes whose command line holds `marker`. */
  pids(marker: string): number[];
  /** The one live process holding `marker`; throws when there are none or several. */
  pid(marker: string): number;
  /** SIGTERM to the launcher; resolves with how it ended once no process of the stack is left. */
  stop(timeoutMs?: number): Promise<number | string>;
  killAll(): void;
}

function launched(proc: Proc, dataDir: string, url: string, temporalPort: number): Launched {
  const pids = (marker: string) => pidsOf(marker, dataDir);
  /** The last port the launcher says `name` moved to (after a clash it may move twice). */
  const movedTo = (name: string) =>
    [...proc.output().matchAll(new RegExp(`\\[setup\\] ${name}: port \\d+ is taken, using (\\d+)`, 'g'))].at(-1)?.[1];
  return {
    proc,
    dataDir,
    get url() {
      const banner = /APIs: +(http:\/\/[^ ]+)\/api/.exec(proc.output());
      return banner ? banner[1] : url;
    },
    get temporalAddress() {
      return `127.0.0.1:${movedTo('temporal') ?? temporalPort}`;
    },
    output: proc.output,
    pids,
    pid: (marker) => {
      const found = pids(marker);
      if (found.length !== 1) throw new Error(`${found.length} processes hold '${marker}': ${found.join(', ')}`);
      return found[0];
    },
    stop: async (timeoutMs = 60_000) => {
      proc.child.kill('SIGTERM');
      const how = await proc.ended;
      // npm may end before the launcher has finished stopping its children: their end is waited for, not assumed.
      await waitFor(
        async () => (pidsOf('', dataDir).length === 0 ? true : undefined),
        `every process of the stack gone (left: ${JSON.stringify(processesOf(dataDir))})`,
        timeoutMs,
      );
      return how;
    },
    killAll: () => killAll(dataDir),
  };
}

/** Waits for the launcher's ready banner (setup, engines and every child up); throws with its output when it ends first. */
export async function untilBanner(l: Launched, timeoutMs = 300_000): Promise<void> {
  let ended: number | string | undefined;
  void l.proc.ended.then((how) => (ended = how));
  // waitFor retries a check that throws: the launcher's end is answered, then thrown here, so it ends the wait.
  const r = await waitFor(
    async () => (ended !== undefined ? 'ended' : l.output().includes('Ctrl-C stops everything') ? 'ready' : undefined),
    'the ready banner',
    timeoutMs,
  );
  if (r === 'ended') throw new Error(`the launcher ended (${ended}) before it was ready`);
}

/** `npm start` on `port` with its own data directory and free Temporal ports; `env` adds to (or unsets) the rest. */
export async function npmStart(
  port: number,
  dataDir: string,
  env: Record<string, string | undefined> = {},
): Promise<Launched> {
  const temporalPort = await freePort();
  const proc = spawnProc('npm', ['start', '--silent'], {
    PORT: String(port),
    DATA_DIR: dataDir,
    TEMPORAL_DEV_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: undefined,
    LOG_LEVEL: 'info',
    ...env,
  });
  return launched(proc, dataDir, `http://127.0.0.1:${port}`, temporalPort);
}

/** `npm run cluster` with its first API on `port`, its own data directory and free Temporal ports. */
export async function npmCluster(
  port: number,
  dataDir: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Launched> {
  const temporalPort = await freePort();
  const proc = spawnProc('npm', ['run', 'cluster', '--silent', '--', '--port', String(port), ...args], {
    DATA_DIR: dataDir,
    // The cluster never allows private targets by itself; the tests' receivers and doubles are on loopback.
    ALLOW_PRIVATE_URLS: 'true',
    TEMPORAL_DEV_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: undefined,
    LOG_LEVEL: 'info',
    ...env,
  });
  return launched(proc, dataDir, `http://127.0.0.1:${port}`, temporalPort);
}
