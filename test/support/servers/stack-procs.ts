/**
 * The processes of a stack started by a launcher (`npm start`, `npm run cluster`), found from /proc (Linux): every
 * process of it (npm, the launcher, its children, their engines, also once re-parented to init) carries the stack's
 * DATA_DIR in its environment.
 */
import fs from 'node:fs';

function cmdline(pid: number | string): string {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
}

/** The pids of the processes whose command line holds `marker` and whose environment holds `DATA_DIR=dataDir`. */
export function pidsOf(marker: string, dataDir: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!cmdline(d).includes(marker)) continue;
      if (fs.readFileSync(`/proc/${d}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`))
        out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

/** The live processes of the stack, with their command lines (for a message naming survivors). */
export function processesOf(dataDir: string): { pid: number; cmd: string }[] {
  return pidsOf('', dataDir).flatMap((pid) => {
    try {
      return [{ pid, cmd: cmdline(pid).slice(0, 200) }];
    } catch {
      return [];
    }
  });
}

/** The parent pid of `pid`, or undefined once it is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** SIGKILL, quietly (the process may be gone already). */
export function killPid(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

/** Every process of the stack, killed. */
export function killAll(dataDir: string): void {
  for (const pid of pidsOf('', dataDir)) killPid(pid);
}
