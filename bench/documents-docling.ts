/**
 * docling-slim for bench/documents.bench.ts: its venv in the cache, installed on first use with the extras of the
 * formats the bench reads (no models, no torch), and one worker process (bench/documents_docling.py) that keeps one
 * converter for the whole run and answers one request at a time over stdin/stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const DOCLING_VERSION = '2.143.0';
const EXTRAS = 'format-office,format-opendocument,format-email,format-web,format-html,convert-core';
const VENV = path.join(process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'), 'docling-venv');

/** The venv's python once docling-slim imports there, else null (the bench then runs without it). */
export function doclingPython(): string | null {
  const py = path.join(VENV, 'bin', 'python');
  const installed = () =>
    spawnSync(py, ['-c', `import importlib.metadata as m; assert m.version("docling-slim") == "${DOCLING_VERSION}"`])
      .status === 0;
  if (!fs.existsSync(py) && spawnSync('python3', ['-m', 'venv', VENV]).status !== 0) return null;
  if (!installed())
    spawnSync(py, ['-m', 'pip', 'install', '-q', `docling-slim[${EXTRAS}]==${DOCLING_VERSION}`], { stdio: 'ignore' });
  return installed() ? py : null;
}

type Answer = { ready?: boolean; ms?: number[]; error?: string };

export class DoclingWorker {
  private readonly answers: Answer[] = [];
  private waiting: ((a: Answer) => void) | undefined;

  private constructor(private readonly child: ChildProcess) {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      let a: Answer;
      try {
        a = JSON.parse(line) as Answer;
      } catch {
        return; // a library's stray print
      }
      if (this.waiting) this.waiting(a);
      else this.answers.push(a);
    });
    child.on('exit', (code) => this.waiting?.({ error: `docling worker exited (${code})` }));
  }

  /** Starts the worker and waits for its converter (startup excluded from every figure). */
  static async start(python: string, script: string): Promise<DoclingWorker> {
    const child = spawn(python, [script], { stdio: ['pipe', 'pipe', 'ignore'] });
    const w = new DoclingWorker(child);
    const first = await w.next(300_000);
    if (!first.ready) throw new Error(`docling worker did not start: ${first.error ?? 'no answer'}`);
    return w;
  }

  private next(timeoutMs: number): Promise<Answer> {
    const queued = this.answers.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        resolve({ error: `no answer in ${timeoutMs} ms` });
      }, timeoutMs);
      this.waiting = (a) => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(a);
      };
    });
  }

  /** One untimed conversion, then `runs` timed ones; the Markdown of the last and the median time. */
  async convert(file: string, out: string, runs: number): Promise<{ value: string; ms: number }> {
    this.child.stdin!.write(`${JSON.stringify({ path: file, out, runs: runs + 1 })}\n`);
    const a = await this.next(600_000);
    if (a.error || !a.ms) throw new Error(a.error ?? 'no times');
    const timedMs = a.ms.slice(1).sort((x, y) => x - y);
    const m = timedMs.length;
    const median = m % 2 ? timedMs[(m - 1) / 2]! : (timedMs[m / 2 - 1]! + timedMs[m / 2]!) / 2;
    return { value: fs.readFileSync(out, 'utf8'), ms: median };
  }

  /** Ends the worker: stdin closed, then killed if it has not exited within 10 s. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
