import { activitiesFor } from '../routing';
import type { PipelineContext } from './context';

/**
 * External OCR (spec §4.2 process-external-ocr): prepare → the external service's Markdown and, in parallel, page
 * renders for the pages archive → results.
 */
export async function externalOcrPipeline(ctx: PipelineContext<'external_ocr'>): Promise<Record<string, unknown>> {
  const steps = activitiesFor();
  const { jobId, parameters } = ctx.input;
  ctx.progress('prepare', 2, 'Reading the document');
  const prep = await steps.preparePdf({ jobId, parameters });
  ctx.progress('ocr', 10, `Sending ${prep.pages.length} page(s) to the OCR service`);
  const [ocr, pages] = await Promise.all([
    steps.externalOcrPdf({
      jobId,
      inputKey: prep.inputKey,
      sha256: prep.sha256,
      pages: prep.pages,
      pageCount: prep.pageCount,
      includeImages: parameters.includeImages !== false,
      useCache: parameters.use_cache !== false,
    }),
    parameters.includePageImages !== false
      ? steps.renderPdfImages({
          jobId,
          inputKey: prep.inputKey,
          sha256: prep.sha256,
          pages: prep.pages,
          archive: 'pages.zip',
        })
      : Promise.resolve(undefined),
  ]);
  ctx.log('info', `${ocr.pages} page(s) recognised by ${ocr.model}${ocr.fromCache ? ' (from the result cache)' : ''}`);
  ctx.progress('finish', 95, 'Writing the results');
  const fin = await steps.finishExternalOcr({
    jobId,
    parameters,
    pageCount: prep.pageCount,
    fileSize: Number(parameters.file_size ?? 0),
    pagesArchive: pages?.archive,
    fromCache: ocr.fromCache,
  });
  return fin.results;
}
