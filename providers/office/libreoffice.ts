import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { toolEnvironment } from '../../core/config/config';
import { AppError } from '../../core/errors';
import type { OfficeCallOptions, OfficeEngine, OfficeTarget } from '../../domain/engines/office';
import { EngineStallError, engineStallTimeoutMs } from '../process/run-tool';
import { prepareProfile } from './profile';

/** The bridge (Debian's python3 with python3-uno) that keeps one soffice running for a slot. */
export const UNO_BRIDGE_SCRIPT = fileURLToPath(new URL('./uno_bridge.py', import.meta.url));

/** A conversion the bridge can write: the engine's four, plus the binary formats the tests write inputs in. */
export type BridgeTarget = OfficeTarget | 'doc' | 'xls' | 'ppt' | 'odt';

export interface LibreOfficeOptions {
  /** `soffice` (core/config `libreOfficePath`). */
  sofficePath: string;
  /** A python3 that imports `uno` (Debian's python3-uno is for /usr/bin/python3). */
  python?: string;
  /** Where the profiles live (`lo-profile-N`), one per slot; default a directory under the system temp dir. */
  scratchDir?: string;
  /** Conversions at once, each in its own LibreOffice (default 1). */
  slots?: number;
  /** A conversion with no answer for this long is killed (default: the process-wide engine stall timeout). */
  stallTimeoutMs?: number;
}

export interface BridgeRequest {
  input: string;
  output: string;
  target: BridgeTarget;
  /** The password to open the input with. */
  password?: string;
  /** Writes the output encrypted with this password (ODF targets; the tests' encrypted inputs). */
  encryptionPassword?: string;
}

interface BridgeAnswer {
  id?: number;
  ok: boolean;
  reason?: string;
  message?: string;
  ready?: boolean;
  pid?: number;
}

/** Reasons of the input, not of the engine: 422 `UNPROCESSABLE_INPUT` (contract §12). */
const INPUT_REASONS = new Set(['password_protected', 'corrupt', 'unsupported_conversion']);

/**
 * One LibreOffice kept running: the bridge process and the soffice it started (each its own process group, so a kill
 * takes every process either forked). Converts one file at a time; after a kill (abort, stall) or a crash it is
 * started again, with the same profile, on the next conversion.
 */
class OfficeSlot {
  private bridge: ChildProcess | undefined;
  private sofficePid: number | undefined;
  private ready: Promise<void> | undefined;
  private waiting: ((a: BridgeAnswer) => void) | undefined;
  private nextId = 1;
  busy = false;

  constructor(
    private readonly opts: Required<Omit<LibreOfficeOptions, 'slots' | 'stallTimeoutMs'>>,
    readonly profileDir: string,
  ) {}

  /** The pids of the processes this slot runs (tests check none is left). */
  pids(): number[] {
    return [this.bridge?.pid, this.sofficePid].filter((p): p is number => p !== undefined);
  }

  private start(): Promise<void> {
    return (this.ready ??= (async () => {
      await prepareProfile(this.profileDir);
      const pipe = `docproc-lo-${process.pid}-${path.basename(this.profileDir)}-${Date.now()}`;
      const child = spawn(this.opts.python, [UNO_BRIDGE_SCRIPT, this.opts.sofficePath, this.profileDir, pipe], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        env: toolEnvironment(),
      });
      this.bridge = child;
      let buf = '';
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      await new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.stdout!.on('data', (d: Buffer) => {
          buf += d.toString();
          for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            let answer: BridgeAnswer;
            try {
              answer = JSON.parse(line) as BridgeAnswer;
            } catch {
              continue; // not the bridge's (a library's stray print): nothing waits for it
            }
            if (answer.ready) {
              this.sofficePid = answer.pid;
              resolve();
            } else this.waiting?.(answer);
          }
        });
        child.on('exit', (code, signal) => {
          const gone = new Error(`LibreOffice stopped (${signal ?? `exit ${code}`}) ${stderr.trim()}`.trim());
          if (this.bridge === child) this.reset();
          reject(gone);
          this.waiting?.({ ok: false, reason: 'engine', message: gone.message });
        });
      });
    })().catch((err: unknown) => {
      this.kill();
      throw err;
    }));
  }

  /** Kills the bridge and soffice, each by its process group; the next conversion starts them again. */
  kill(): void {
    for (const pid of this.pids()) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    this.reset();
  }

  private reset(): void {
    this.bridge = undefined;
    this.sofficePid = undefined;
    this.ready = undefined;
  }

  async run(req: BridgeRequest, stallMs: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.start();
    const id = this.nextId++;
    const answer = await new Promise<BridgeAnswer>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiting = undefined;
      };
      const onAbort = (): void => {
        done();
        this.kill();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        done();
        this.kill();
        reject(new EngineStallError('libreoffice', stallMs));
      }, stallMs);
      this.waiting = (a) => {
        if (a.id !== undefined && a.id !== id) return;
        done();
        resolve(a);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.bridge!.stdin!.write(JSON.stringify({ id, ...req }) + '\n');
    });
    if (answer.ok) return;
    if (answer.reason && INPUT_REASONS.has(answer.reason))
      throw new AppError('UNPROCESSABLE_INPUT', `LibreOffice cannot convert the document: ${answer.message}`, {
        reason: answer.reason,
      });
    if (answer.reason === 'engine') throw new OfficeCrashError(answer.message ?? 'no answer');
    throw new Error(`LibreOffice failed: ${answer.message ?? 'no answer'}`);
  }
}

/** The kept LibreOffice died during a conversion (its bridge answered `engine` and stopped). */
class OfficeCrashError extends Error {
  constructor(message: string) {
    super(`LibreOffice stopped during the conversion: ${message}`);
    this.name = 'OfficeCrashError';
  }
}

/** `--convert-to` arguments of the targets a one-shot conversion writes. */
const ONE_SHOT: Partial<Record<BridgeTarget, string>> = {
  pdf: 'pdf',
  docx: 'docx:MS Word 2007 XML',
  xlsx: 'xlsx:Calc MS Excel 2007 XML',
  pptx: 'pptx:Impress MS PowerPoint 2007 XML',
};

/**
 * One `soffice --headless --convert-to` of `req.input` on `profileDir` (the slot's, with its settings: macros
 * disabled, links never updated), in its own process group, killed with the group on a stall or an abort. Writes
 * `req.output`; refuses the document 422 `engine_crash` when LibreOffice writes nothing.
 */
async function convertOnce(
  sofficePath: string,
  profileDir: string,
  req: BridgeRequest,
  stallMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const outDir = await mkdtemp(path.join(path.dirname(req.output), '.lo-once-'));
  try {
    await prepareProfile(profileDir);
    const child = spawn(
      sofficePath,
      [
        `-env:UserInstallation=${pathToFileURL(profileDir).href}`,
        '--headless',
        '--norestore',
        '--nolockcheck',
        '--convert-to',
        ONE_SHOT[req.target]!,
        '--outdir',
        outDir,
        req.input,
      ],
      { stdio: 'ignore', detached: true, env: toolEnvironment() },
    );
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup();
        reject(new EngineStallError('libreoffice', stallMs));
      }, stallMs);
      const onAbort = () => {
        clearTimeout(timer);
        killGroup();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', reject);
      child.on('exit', () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        killGroup(); // anything it forked
        resolve();
      });
    });
    const written = path.join(outDir, `${path.parse(req.input).name}.${req.target}`);
    try {
      await rename(written, req.output);
    } catch {
      throw new AppError('UNPROCESSABLE_INPUT', 'LibreOffice stops while reading this document.', {
        reason: 'engine_crash',
      });
    }
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/**
 * The office engine on LibreOffice headless (issue 35): `slots` LibreOffice processes kept running, each with its own
 * profile (`lo-profile-N`) and one conversion at a time; further calls wait for a free slot. Measured here: a warm
 * 10-page DOCX to PDF in about 0.2-0.3 s, against about 2 s for a `soffice --convert-to` per file (its start).
 */
export class LibreOfficeEngine implements OfficeEngine {
  private readonly slots: OfficeSlot[];
  private readonly queue: Array<() => void> = [];
  private readonly root: string;
  private closed = false;

  constructor(private readonly opts: LibreOfficeOptions) {
    this.root = path.join(opts.scratchDir ?? os.tmpdir(), `docproc-office-${process.pid}`);
    const base = { sofficePath: opts.sofficePath, python: opts.python ?? '/usr/bin/python3', scratchDir: this.root };
    this.slots = Array.from(
      { length: Math.max(1, opts.slots ?? 1) },
      (_, n) => new OfficeSlot(base, path.join(this.root, `lo-profile-${n + 1}`)),
    );
  }

  /** Every pid the engine runs now (the tests check that none is left after a kill or `close`). */
  pids(): number[] {
    return this.slots.flatMap((s) => s.pids());
  }

  async convert(
    inputPath: string,
    target: OfficeTarget,
    outDir: string,
    opts: OfficeCallOptions = {},
  ): Promise<string> {
    const output = path.join(outDir, `${path.parse(inputPath).name}.${target}`);
    await this.convertTo({ input: path.resolve(inputPath), output: path.resolve(output), target }, opts.signal);
    return output;
  }

  /**
   * Any conversion the bridge knows (`BridgeTarget`), with its passwords: for tests and the engine's callers. A
   * document the kept LibreOffice dies loading (LibreOffice 7.4 does on some DOCX and HTML files when loaded through
   * UNO, not through `--convert-to`) is converted once more by a `soffice --convert-to` of its own on the slot's
   * profile, while the slot's LibreOffice is down; when that fails too, the document is refused 422 `engine_crash`.
   */
  async convertTo(req: BridgeRequest, signal?: AbortSignal): Promise<void> {
    if (this.closed) throw new Error('the office engine is closed');
    const slot = await this.acquire(signal);
    const stallMs = this.opts.stallTimeoutMs ?? engineStallTimeoutMs();
    try {
      try {
        await slot.run(req, stallMs, signal);
      } catch (err) {
        if (!(err instanceof OfficeCrashError) || req.password || req.encryptionPassword || !ONE_SHOT[req.target])
          throw err;
        slot.kill();
        await convertOnce(this.opts.sofficePath, slot.profileDir, req, stallMs, signal);
      }
    } finally {
      slot.busy = false;
      this.queue.shift()?.();
    }
  }

  private async acquire(signal?: AbortSignal): Promise<OfficeSlot> {
    for (;;) {
      if (signal?.aborted) {
        this.queue.shift()?.(); // a wake-up this caller no longer needs goes to the next in line
        signal.throwIfAborted();
      }
      const free = this.slots.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots) slot.kill();
    await rm(this.root, { recursive: true, force: true });
  }
}
