import { expect } from 'chai';
import type { Stack } from '../servers/stack';

/** Helpers of the PDF endpoint tests: multipart posting and the success envelope. */

/** A file part of a multipart form. */
export interface FormFile {
  bytes: Buffer;
  name: string;
  type: string;
}

/** Posts a multipart form to `url` (global FormData and Blob); answers status, parsed body, headers and elapsed ms. */
export async function postMultipart(
  url: string,
  fields: Record<string, string>,
  file?: FormFile,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; ms: number; headers: Headers }> {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const t0 = Date.now();
  const res = await fetch(url, { method: 'POST', body: form, headers, signal: AbortSignal.timeout(90_000) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, ms: Date.now() - t0, headers: res.headers };
}

/** Posts a multipart form to /api/pdf/process; answers status, parsed body, elapsed ms and headers. */
export function postPdf(
  s: Stack,
  fields: Record<string, string>,
  file?: Buffer,
  name = 'doc.pdf',
): Promise<{ status: number; body: any; ms: number; headers: Headers }> {
  return postMultipart(`${s.url}/api/pdf/process`, fields, file && { bytes: file, name, type: 'application/pdf' });
}

/** The `data` of a 200 success envelope. */
export function okData(r: { status: number; body: any }): any {
  expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(200);
  expect(r.body.status).to.equal('success');
  return r.body.data;
}
