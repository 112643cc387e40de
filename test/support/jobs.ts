import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { BlobStore } from '../../core/stores/blob-store';
import { jobOutputKey } from '../../core/stores/records';
import { tempDir } from './servers/engines';
import { waitFor } from './wait';

/** Helpers of the job-engine integration tests (jobs, batches, webhooks). */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it answers something other than undefined; fails after `timeoutMs` naming `what`. */
export const until = <T>(
  fn: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> => waitFor(fn, what, { timeoutMs, everyMs, errors: 'throw' });

/** HTML of about `bytes` characters: paragraphs with inline markup and small tables. */
export function generatedHtml(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p =
      `<h2>Section ${i}</h2><p>Paragraph ${i} with <b>bold</b>, <i>italic</i> and <a href="https://example.com/${i}">a link</a>.</p>` +
      `<table><tr><th>Key</th><th>Value</th></tr><tr><td>row ${i}</td><td>${i * 7}</td></tr></table>`;
    parts.push(p);
    size += p.length;
  }
  return `<html><body>${parts.join('\n')}</body></html>`;
}

export const SMALL_HTML = '<h1>Report</h1><p>Hello <b>world</b>.</p><ul><li>one</li><li>two</li></ul>';

export const transformerJob = (html = SMALL_HTML, extra: Record<string, unknown> = {}) => ({
  job_type: 'transformer',
  parameters: { operation: 'html-to-markdown', html, ...extra },
});

export const pdfJob = (extra: Record<string, unknown> = {}) => ({
  job_type: 'pdf',
  parameters: { filename: '/tmp/none.pdf', ...extra },
});

/**
 * Keeps a transformer job in `processing` for a few seconds, at a known point, without using CPU: a blob under the
 * key its step writes (`result.md`) makes that key a folder, so every attempt of the step fails and is retried with
 * backoff (the step's retry schedule, about 3 s), after which the job fails with an internal error. The job id must
 * be known before the job starts (an Idempotency-Key makes it so: see idFromKey). Unlike a large input, whose
 * duration depends on the machine's speed and load, the job sits still at a fixed progress while it is held.
 */
export async function holdJobOutput(store: BlobStore, jobId: string): Promise<void> {
  await store.put(`${jobOutputKey(jobId, 'result.md')}/hold`, 'hold');
}

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: () => any;
}

/** A request with the path sent byte for byte (fetch would normalise `..` and `//`). */
export function rawRequest(
  baseUrl: string,
  rawPath: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawReply> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: Number(u.port),
        path: rawPath,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, body, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`request timed out: ${rawPath}`)));
    req.on('error', reject);
    req.end();
  });
}

/** GET of a binary body with its headers. */
export async function download(url: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** The entries of a ZIP, read with the `unzip` CLI (or Python's zipfile where `unzip` is missing). */
export function unzip(zip: Buffer): { names: string[]; read(name: string): string } {
  const file = path.join(tempDir('docproc-zip-'), 'archive.zip');
  fs.writeFileSync(file, zip);
  const hasUnzip = (() => {
    try {
      execFileSync('unzip', ['-v'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  const py = (code: string, ...args: string[]) => execFileSync('python3', ['-c', code, file, ...args]).toString('utf8');
  const names = hasUnzip
    ? execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean)
    : py('import sys,zipfile;print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))').split('\n').filter(Boolean);
  return {
    names,
    read: (name) =>
      hasUnzip
        ? execFileSync('unzip', ['-p', file, name]).toString('utf8')
        : py(
            'import sys;import zipfile;sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())',
            name,
          ),
  };
}

export interface SseEvent {
  id?: number;
  event?: string;
  data?: any;
  raw: string;
}

/**
 * Reads a Server-Sent Events stream with fetch and a reader until the server ends it; parses `id:`, `event:` and
 * `data:` lines. Fails after `timeoutMs` if the stream does not end, unless `partial`: then it stops reading there
 * and answers what came so far.
 */
export async function readSse(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
  partial = false,
): Promise<{
  status: number;
  contentType: string | null;
  events: SseEvent[];
  comments: string[];
  retry?: number;
  json?: any;
}> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  try {
    const res = await fetch(url, { headers, signal: ctrl.signal });
    const contentType = res.headers.get('content-type');
    if (!contentType?.startsWith('text/event-stream'))
      return { status: res.status, contentType, events: [], comments: [], json: await res.json() };
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read().catch((e: unknown) => {
        if (partial && ctrl.signal.aborted) return { done: true as const, value: undefined };
        throw new Error(`SSE stream of ${url} did not end within ${timeoutMs} ms: ${String(e)}`);
      });
      if (done) break;
      buf += decoder.decode(value, { stream: true });
    }
    const events: SseEvent[] = [];
    const comments: string[] = [];
    let retry: number | undefined;
    for (const block of buf.split('\n\n')) {
      if (!block.trim()) continue;
      const ev: SseEvent = { raw: block };
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else if (line.startsWith('retry:')) retry = Number(line.slice(6).trim());
        else if (line.startsWith('id:')) ((ev.id = Number(line.slice(3).trim())), (isEvent = true));
        else if (line.startsWith('event:')) ((ev.event = line.slice(6).trim()), (isEvent = true));
        else if (line.startsWith('data:')) ((ev.data = JSON.parse(line.slice(5).trim())), (isEvent = true));
      }
      if (isEvent) events.push(ev);
    }
    return { status: res.status, contentType, events, comments, retry };
  } finally {
    clearTimeout(timer);
  }
}
