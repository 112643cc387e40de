import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { bookkeepingRemote, cpuBound, providerCall } from '../activity-options';
import type { PipelineContext } from './context';

type Activities = ReturnType<typeof createActivities>;

/** Image OCR: (download the URL) → tesseract on the media queue → template and results. */
export async function imageOcrPipeline(ctx: PipelineContext): Promise<Record<string, unknown>> {
  const media = proxyActivities<Activities>({ ...cpuBound, taskQueue: workflowInfo().taskQueue.replace(/-io$/, '-media') });
  const net = proxyActivities<Activities>(providerCall);
  const io = proxyActivities<Activities>({ ...bookkeepingRemote, startToCloseTimeout: '10m' });
  const { jobId, parameters } = ctx.input;
  let blob = { key: String(parameters.file_key ?? ''), sha256: String(parameters.file_sha256 ?? '') };
  if (typeof parameters.url === 'string') {
    ctx.progress('download', 5, 'Downloading the image');
    blob = await net.fetchImage({ jobId, url: parameters.url });
  }
  ctx.progress('ocr', 20, 'Recognising text');
  const r = await media.ocrImageBlob({ jobId, key: blob.key, sha256: blob.sha256, languages: (parameters.ocr_language ?? parameters.source_language) as string | undefined });
  ctx.log('info', `${r.chars} characters recognised (confidence ${r.metadata.confidence})`);
  ctx.progress('finish', 90, 'Writing the results');
  return (await io.finishImageOcr({ jobId, parameters })).results;
}
