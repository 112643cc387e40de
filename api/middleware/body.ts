import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../core/errors';

export interface BodyLimits {
  jsonBytes: number;
  uploadBytes: number;
  /** Parent of the per-request upload directories. */
  uploadRoot: string;
}

/**
 * JSON bodies are parsed by co-body with a size limit. Multipart uploads go to a directory of their own per
 * request, removed when the request ends on every path (success, validation error, 413, client abort), so no
 * partial upload stays behind.
 */
export function bodyParsers(limits: BodyLimits) {
  const json = koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: limits.jsonBytes, jsonStrict: true });
  const multipart = async (ctx: Context, next: Next): Promise<void> => {
    const dir = path.join(limits.uploadRoot, randomUUID());
    await fs.mkdir(dir, { recursive: true });
    try {
      const parse = koaBody({
        multipart: true,
        json: false,
        urlencoded: false,
        text: false,
        formidable: {
          uploadDir: dir,
          maxFileSize: limits.uploadBytes,
          maxTotalFileSize: limits.uploadBytes,
          maxFieldsSize: 2 * 1024 * 1024,
          maxFields: 200,
          keepExtensions: false,
          allowEmptyFiles: true,
          minFileSize: 0,
        },
        onError: (err) => {
          const e = err as { httpCode?: number; code?: number };
          if (e.httpCode === 413) {
            throw new AppError('PAYLOAD_TOO_LARGE', 'The upload is too large.', { limit_bytes: limits.uploadBytes });
          }
          throw new AppError('VALIDATION_ERROR', 'The multipart body could not be read.', {
            issues: [{ path: '', message: 'malformed multipart body' }],
          });
        },
      });
      await parse(ctx, next);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  };
  return { json, multipart };
}

/** Removes per-request upload directories left by a crash of an earlier process. */
export async function sweepUploadRoot(uploadRoot: string): Promise<void> {
  await fs.rm(uploadRoot, { recursive: true, force: true });
  await fs.mkdir(uploadRoot, { recursive: true });
}
