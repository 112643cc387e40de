import { chunkParamsOf, withDefaults } from '../../core/jobs/job-defaults';
import type { ImageOcrParams, PdfParams } from '../../core/jobs/job-params';
import { activitiesFor, modelRoute, PRIORITY } from '../routing';
import type { PipelineContext } from './context';
import { imageOcrPipeline } from './imageocr.pipeline';
import { pdfPipeline } from './pdf.pipeline';

/**
 * The document job type (contract §12): one media step reads the file by its content and either writes its results
 * (the template, when given, is the next step's) or hands it on: a PDF to the pdf pipeline, an image to the imageocr
 * pipeline (each answering as its endpoint does), and a document with `extraction_method=render` to the pdf pipeline
 * as LibreOffice's PDF of it, read with `render_method`.
 */
export async function documentPipeline(ctx: PipelineContext<'document'>): Promise<Record<string, unknown>> {
  const { jobId, parameters } = ctx.input;
  const p = withDefaults('document', parameters);
  const media = activitiesFor({ jobId, fair: true, priority: PRIORITY.first });
  ctx.progress('read', 5, 'Reading the document');
  const read = await media.readDocumentFile({ jobId, parameters });
  if (read.kind === 'results') {
    ctx.log('info', `${read.format}: ${read.parts} part(s)${read.results.from_cache ? ' from the result cache' : ''}`);
    return read.results;
  }
  if (read.kind === 'template') {
    ctx.log('info', `${read.format}: ${read.parts} part(s); applying the template`);
    ctx.progress('template', 60, 'Applying the template');
    const io = activitiesFor({ jobId, model: modelRoute(true) });
    return (await io.finishDocument({ jobId, parameters })).results;
  }
  if (read.kind === 'image') {
    ctx.log('info', 'an image: read by OCR');
    const image: ImageOcrParams = {
      file_key: read.fileKey,
      file_sha256: read.sha256,
      ...(p.template ? { template: p.template, context: p.context } : {}),
      ...(p.ocr_language ? { ocr_language: p.ocr_language } : {}),
      ...(p.output_format ? { output_format: p.output_format } : {}),
      ...(p.use_cache !== undefined ? { use_cache: p.use_cache } : {}),
      ...chunkParamsOf(p),
    };
    return imageOcrPipeline({ ...ctx, input: { ...ctx.input, jobType: 'imageocr', parameters: image } });
  }
  const rendered = read.format !== 'pdf';
  ctx.log('info', rendered ? `${read.format}: rendered to PDF by LibreOffice` : 'a PDF: read by the PDF path');
  const pdf: PdfParams = {
    file_key: read.fileKey,
    ...(p.original_name ? { original_name: p.original_name } : {}),
    extraction_method: p.render_method,
    ...(p.output_format ? { output_format: p.output_format } : {}),
    ...(p.table_format ? { table_format: p.table_format } : {}),
    ...(p.template ? { template: p.template, context: p.context } : {}),
    ...(p.use_cache !== undefined ? { use_cache: p.use_cache } : {}),
    ...(p.includeImages ? { includeImages: true } : {}),
    ...(p.page_start ? { page_start: p.page_start } : {}),
    ...(p.page_end ? { page_end: p.page_end } : {}),
    ...(p.ocr_language ? { ocr_language: p.ocr_language } : {}),
    ...(rendered ? { document_format: read.format } : {}),
    ...chunkParamsOf(p),
  };
  return pdfPipeline({ ...ctx, input: { ...ctx.input, jobType: 'pdf', parameters: pdf } });
}
