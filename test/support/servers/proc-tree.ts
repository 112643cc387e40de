/** Child processes of a process, from /proc (Linux): the worker's speech engine processes, for tests and benchmarks. */
import fs from 'node:fs';

/** Pids whose parent is `pid` (and whose command line matches `match`, when given); [] where /proc is missing. */
export function childPids(pid: number | undefined, match?: RegExp): number[] {
  if (!pid || !fs.existsSync('/proc')) return [];
  const found: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      if (match && !match.test(fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' '))) continue;
      found.push(Number(e));
    } catch {
      /* the process ended meanwhile */
    }
  }
  return found;
}

/** The speech engine processes (whisper_engine.py) a worker runs. */
export const enginePids = (workerPid: number | undefined): number[] => childPids(workerPid, /whisper_engine\.py/);

/** The tool launchers (providers/process/tool_launcher.py) a process runs: at most one. */
export const launcherPids = (pid: number): number[] => childPids(pid, /tool_launcher\.py/);

/**
 * The poppler processes (pdfinfo, pdftotext) a process runs, as its children or through its tool launcher: none
 * should outlive the request that started them.
 */
export const popplerPids = (pid: number): number[] =>
  [pid, ...launcherPids(pid)].flatMap((p) => childPids(p, /\b(pdfinfo|pdftotext)\b/));
