/**
 * What the tests of the API's direct PDF answers (text: issue 24; Markdown: issue 25) share: a document of known
 * pages, workflow starts counted, the same request as a job, the refusals both paths must give alike, and the check
 * that a request leaves no file behind.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { buildPdf, corruptPdf, zeroPagePdf } from './documents/pdf-factory';
import { postMultipart } from './clients/pdf-http';
import { strayUploads } from './results';
import type { Stack } from './servers/stack';

/** A PDF of `pages` pages (the third without a text layer), with a title and an author; `lines` gives a page's text. */
export function directDocPdf(pages: number, lines: (page: number) => string[]): Buffer {
  return buildPdf({
    title: 'Direkt gelesen',
    author: 'Ada Größe',
    pages: Array.from({ length: pages }, (_, p) => ({
      kind: 'lines' as const,
      lines: p === 2 ? [] : lines(p + 1),
      size: 10,
    })),
  });
}

/** Calls `onStart` with each workflow id the API's Temporal client starts; the starts pass on unchanged. */
export function countWorkflowStarts(s: Stack, onStart: (workflowId: string) => void): void {
  const wf = s.api.temporal.client.workflow;
  const start = wf.start.bind(wf);
  wf.start = ((type: never, options: { workflowId: string }) => {
    onStart(options.workflowId);
    return start(type, options as never);
  }) as typeof wf.start;
}

/** The same request as a job: `wait_ms` asks for one (and waits for it). */
export const pdfViaJob = (s: Stack, fields: Record<string, string>, pdf: Buffer) =>
  postMultipart(`${s.url}/api/pdf/process?wait_ms=60000`, fields, {
    bytes: pdf,
    name: 'doc.pdf',
    type: 'application/pdf',
  });

/** Documents both paths refuse alike: name, file, range fields, status, code. */
export function refusedPdfs(
  maxPages: number,
  docPdf: (pages: number) => Buffer,
): [string, () => Buffer, Record<string, string>, number, string][] {
  return [
    ['a corrupt PDF', corruptPdf, {}, 422, 'UNPROCESSABLE_INPUT'],
    [
      'an encrypted PDF',
      () => buildPdf({ userPassword: 'geheim', pages: [{ kind: 'lines', lines: ['Vertraulich'] }] }),
      {},
      422,
      'UNPROCESSABLE_INPUT',
    ],
    ['a PDF without pages', zeroPagePdf, {}, 422, 'UNPROCESSABLE_INPUT'],
    ['bytes that are no PDF', () => Buffer.from('just some plain text, no PDF header'), {}, 400, 'INVALID_FORMAT'],
    [`a document over MAX_PDF_PAGES (${maxPages})`, () => docPdf(maxPages + 1), {}, 400, 'VALIDATION_ERROR'],
    ['a page range after the last page', () => docPdf(3), { page_start: '5' }, 400, 'VALIDATION_ERROR'],
  ];
}

/**
 * No upload blob but the inputs of jobs that ran (they stay with their job until retention), no temporary upload, no
 * scratch file left (the per-process directories stay).
 */
export async function expectNoRequestFiles(s: Stack): Promise<void> {
  expect(await strayUploads(s.worker.store), 'uploads no job owns').to.deep.equal([]);
  for (const dir of [path.join(s.api.config.dataDir, 'tmp', 'uploads'), s.api.config.scratchDir]) {
    const left = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    expect(
      left.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name)),
      dir,
    ).to.deep.equal([]);
  }
}
