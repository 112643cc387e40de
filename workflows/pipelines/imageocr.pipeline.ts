import { activitiesFor, downloadRoute, modelRoute } from '../routing';
import type { PipelineContext } from './context';

/** Image OCR: (download the URL) → tesseract on the media queue → template and results. */
export async function imageOcrPipeline(ctx: PipelineContext<'imageocr'>): Promise<Record<string, unknown>> {
  const steps = activitiesFor();
  const { jobId, parameters } = ctx.input;
  // The results step asks the model when a template is given.
  const io = activitiesFor({ jobId, model: modelRoute(Boolean(parameters.template)) });
  let blob = { key: String(parameters.file_key ?? ''), sha256: String(parameters.file_sha256 ?? '') };
  if (typeof parameters.url === 'string') {
    ctx.progress('download', 5, 'Downloading the image');
    blob = await activitiesFor({ download: downloadRoute() }).fetchImage({ jobId, url: parameters.url });
  }
  ctx.progress('ocr', 20, 'Recognising text');
  const r = await steps.ocrImageBlob({
    jobId,
    key: blob.key,
    sha256: blob.sha256,
    languages: (parameters.ocr_language ?? parameters.source_language) as string | undefined,
    parameters,
  });
  ctx.log(
    'info',
    r.fromCache
      ? `${r.chars} characters from the result cache`
      : `${r.chars} characters recognised (confidence ${r.metadata.confidence})`,
  );
  ctx.progress('finish', 90, 'Writing the results');
  return (await io.finishImageOcr({ jobId, parameters })).results;
}
