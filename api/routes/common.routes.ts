import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../core/errors';
import { SERVICE_VERSION } from '../../core/runtime/version';
import { errorResponse, jsonResponse, z } from '../openapi';
import type { ApiRouter } from '../api-router';
import { blocksBody, blocksResult, homeBody, sampleList, sampleNameParam } from '../schemas/common.schemas';
import { attachment } from '../services/archive';
import { modelErrors, runTransformerOperation, type TransformerDeps } from './transformer.routes';

export const SAMPLES_DIR = fileURLToPath(new URL('../../samples', import.meta.url));

const TYPES: Record<string, { type: string; mime: string }> = {
  '.pdf': { type: 'document', mime: 'application/pdf' },
  '.docx': {
    type: 'document',
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  },
  '.png': { type: 'image', mime: 'image/png' },
  '.jpg': { type: 'image', mime: 'image/jpeg' },
  '.mp3': { type: 'audio', mime: 'audio/mpeg' },
  '.wav': { type: 'audio', mime: 'audio/wav' },
  '.ogg': { type: 'audio', mime: 'audio/ogg' },
  '.mp4': { type: 'video', mime: 'video/mp4' },
  '.json': { type: 'json', mime: 'application/json' },
  '.html': { type: 'html', mime: 'text/html; charset=utf-8' },
  '.txt': { type: 'text', mime: 'text/plain; charset=utf-8' },
};

/** The shipped sample files: regular files directly in samples/, nothing else. */
/**
 * The media types a sample is served with (its extension's, else application/octet-stream), each documented.
 * application/octet-stream comes first: client generators that model one answer per status take the first type they
 * know (openapi-python-client: application/octet-stream, text, JSON), and only bytes hold every sample.
 */
function sampleContent(): Record<string, { schema: z.ZodType }> {
  const content: Record<string, { schema: z.ZodType }> = {};
  for (const mime of ['application/octet-stream', ...Object.values(TYPES).map((t) => t.mime)]) {
    const type = mime.split(';')[0]!;
    content[type] = {
      schema:
        type === 'application/json'
          ? z
              .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
              .openapi({ description: 'A JSON sample document' })
          : type.startsWith('text/')
            ? z.string()
            : z.string().openapi({ format: 'binary' }),
    };
  }
  return content;
}

async function listSamples(dir: string): Promise<{ filename: string; size: number; type: string; mime: string }[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const out = [];
  for (const e of entries) {
    if (!e.isFile() || e.name.startsWith('.')) continue;
    const st = await fs.stat(path.join(dir, e.name));
    const t = TYPES[path.extname(e.name).toLowerCase()] ?? { type: 'file', mime: 'application/octet-stream' };
    out.push({ filename: e.name, size: st.size, type: t.type, mime: t.mime });
  }
  return out.sort((a, b) => a.filename.localeCompare(b.filename));
}

export function commonRoutes(api: ApiRouter, deps: TransformerDeps, samplesDir = SAMPLES_DIR): void {
  api.add({
    method: 'get',
    path: '/api/common/',
    summary: 'Home',
    description: 'A plain object with a message (no envelope).',
    tags: ['Common'],
    responses: {
      200: {
        description: 'Welcome message',
        content: { 'application/json': { schema: homeBody } },
      },
    },
    handler: (ctx) => {
      ctx.body = {
        message: 'Document and Media Processing Service. See /api/doc for the API.',
        version: SERVICE_VERSION,
        docs: '/api/doc',
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/common/samples',
    summary: 'List the sample files',
    tags: ['Common'],
    responses: { 200: jsonResponse(sampleList, 'Samples') },
    handler: async (ctx) => {
      const samples = (await listSamples(samplesDir)).map(({ filename, size, type }) => ({ filename, size, type }));
      ctx.body = { status: 'success', data: { samples } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/common/samples/{filename}',
    summary: 'Download a sample file',
    description: 'Only the names listed by /api/common/samples; anything else (paths, encoded separators) is 404.',
    tags: ['Common'],
    params: sampleNameParam,
    responses: {
      200: { description: 'The file, with the media type of its extension', content: sampleContent() },
      404: errorResponse('No such sample'),
    },
    handler: async (ctx, { params }) => {
      // The router has decoded the segment once; the name must be exactly one of the listed files.
      const found = (await listSamples(samplesDir)).find(
        (s) => s.filename === params.filename.normalize('NFC') || s.filename === params.filename,
      );
      if (!found) throw new AppError('FILE_NOT_FOUND', 'No such sample file.', { filename: params.filename });
      ctx.body = createReadStream(path.join(samplesDir, found.filename));
      ctx.type = found.mime;
      ctx.length = found.size;
      ctx.set('Content-Disposition', attachment(found.filename));
    },
  });

  api.add({
    method: 'post',
    path: '/api/common/blocks',
    summary: 'Turn a block document into a translated newsfeed entry',
    tags: ['Common'],
    body: blocksBody,
    responses: { 200: jsonResponse(blocksResult, 'Result'), ...modelErrors },
    handler: async (ctx, { body }) => {
      await runTransformerOperation(
        ctx,
        deps,
        { operation: 'blocks', ...body },
        { needsModel: body.source_language !== body.target_language },
      );
    },
  });
}
