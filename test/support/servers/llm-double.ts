/**
 * The wire-protocol LLM double (test/support/servers/llm-server.ts) in a process of its own, so that a test can kill it with
 * SIGKILL in the middle of a generation and start it again on the same port, as a remote model endpoint that crashes
 * and comes back. Every request is written to a journal file (JSON lines, appended synchronously, so a kill loses
 * nothing written): `received` when it arrives, then `answered` when its answer is written to an open connection or
 * `dropped` when the client was gone by then. Answers are a function of the request alone (`doubleContent`), so a
 * test knows what each job must end with.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fieldsIn } from './llm-server';
import { ROOT } from './processes';
import { waitFor } from '../wait';

/** One line of the double's journal. */
export interface DoubleEntry {
  /** Milliseconds since the epoch. */
  t: number;
  pid: number;
  /** Request number within its process. */
  seq: number;
  /**
   * A request's `received`, then `answered` or `dropped` (its client was gone when the answer was sent), and `gone`
   * when its client goes away before; `hold` and `release` when the process sees the hold change.
   */
  event: 'received' | 'answered' | 'dropped' | 'gone' | 'hold' | 'release';
  /** `requestKey` of the request. */
  key: string;
  /** The job marker found in the request (`markerIn`), or ''. */
  marker: string;
}

type Message = { role: string; content: unknown };

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .filter((p: { type?: string }) => p?.type === 'text')
          .map((p: { text?: string }) => p.text ?? '')
          .join('\n')
      : '';

/** The latest user message's text of a chat request. */
export function userText(json: any): string {
  const users = ((json?.messages ?? []) as Message[]).filter((m) => m.role === 'user');
  return textOf(users.at(-1)?.content);
}

/** A test's job marker in a text: `chaos-<letters><digits>`, any case (`CHAOS-T7`, `chaos-s2`). */
export function markerIn(text: string): string {
  return /chaos-[a-z]+\d+/i.exec(text)?.[0] ?? '';
}

/** The same request (model, messages, answer format) always has the same key; a retried call repeats it. */
export function requestKey(json: any): string {
  const { model, messages, response_format } = json ?? {};
  return createHash('sha256').update(JSON.stringify({ model, messages, response_format })).digest('hex').slice(0, 24);
}

/**
 * What the double answers: in JSON mode an object of the fields the prompt lists under `Fields:`, each valued
 * `<name> <marker>`; in text mode `Echo: <user text>`.
 */
export function doubleContent(json: any): string {
  const text = userText(json);
  if (json?.response_format) {
    const users = ((json?.messages ?? []) as Message[]).filter((m) => m.role === 'user').reverse();
    const fields = users.map((m) => fieldsIn(textOf(m.content))).find((f) => f.length) ?? [];
    const marker = markerIn(text) || 'none';
    return JSON.stringify(
      fields.length ? Object.fromEntries(fields.map((f) => [f, `${f} ${marker}`])) : { echo: marker },
    );
  }
  return `Echo: ${text}`;
}

export interface LlmDouble {
  /** Base URL for LLM_BASE_URL. */
  url: string;
  port: number;
  /** The running process, if any. */
  child(): ChildProcess | undefined;
  entries(): DoubleEntry[];
  /** Requests the running process received and has not answered yet, their clients still there (a generation in progress). */
  inFlight(): DoubleEntry[];
  /** Answers delivered, by request key. */
  answeredByKey(): Map<string, DoubleEntry[]>;
  /**
   * Answers wait (after their generation time) until `release()`; resolves once the running process holds them: every
   * answer it sends without waiting is in `entries()` by then.
   */
  hold(): Promise<void>;
  release(): void;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts the double (again) on its port; resolves once it listens. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the double in its own process on `port` (API key `apiKey`), journaling into `dir`; each answer takes
 * `generationMs` (the model generating).
 */
export async function startLlmDouble(opts: {
  port: number;
  dir: string;
  apiKey: string;
  generationMs: number;
  env?: Record<string, string>;
}): Promise<LlmDouble> {
  fs.mkdirSync(opts.dir, { recursive: true });
  const log = path.join(opts.dir, 'llm-double.jsonl');
  const holdFile = path.join(opts.dir, 'llm-double.hold');
  fs.writeFileSync(log, '');
  let proc: ChildProcess | undefined;
  let output = '';
  const entries = (): DoubleEntry[] =>
    fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as DoubleEntry);
  const alive = () => proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  };
  const start = async () => {
    if (alive()) throw new Error('the LLM double runs already');
    output = '';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/support/servers/llm-double.process.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          ...opts.env,
          LLM_DOUBLE_PORT: String(opts.port),
          LLM_DOUBLE_LOG: log,
          LLM_DOUBLE_HOLD: holdFile,
          LLM_DOUBLE_KEY: opts.apiKey,
          LLM_DOUBLE_GENERATION_MS: String(opts.generationMs),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    proc = child;
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d;
        if (output.includes('llm double listening')) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (d) => (output += d));
      child.once('exit', (code, signal) =>
        reject(new Error(`the LLM double exited (${signal ?? code}) before listening: ${output.slice(-2000)}`)),
      );
    });
  };
  await start();
  return {
    url: `http://127.0.0.1:${opts.port}/v1`,
    port: opts.port,
    child: () => proc,
    entries,
    inFlight: () => {
      const pid = alive() ? proc!.pid : undefined;
      const all = entries().filter((e) => e.pid === pid);
      const done = new Set(all.filter((e) => e.event !== 'received').map((e) => e.seq));
      return all.filter((e) => e.event === 'received' && !done.has(e.seq));
    },
    answeredByKey: () => {
      const byKey = new Map<string, DoubleEntry[]>();
      for (const e of entries()) if (e.event === 'answered') byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
      return byKey;
    },
    hold: async () => {
      fs.writeFileSync(holdFile, '');
      const holding = () => {
        const pid = alive() ? proc!.pid : undefined;
        const states = entries().filter((e) => e.pid === pid && (e.event === 'hold' || e.event === 'release'));
        return states.at(-1)?.event === 'hold';
      };
      await waitFor(holding, 'the LLM double to take the hold', { timeoutMs: 30_000, everyMs: 10, errors: 'throw' });
    },
    release: () => fs.rmSync(holdFile, { force: true }),
    kill,
    start,
    stop: async () => {
      fs.rmSync(holdFile, { force: true });
      await kill();
    },
  };
}
