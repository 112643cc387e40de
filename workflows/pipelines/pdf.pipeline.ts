import { patched } from '@temporalio/workflow';
import { mediaFanout, PDF_PAGE_GROUP, PDF_PAGE_GROUP_FINE } from '../../core/jobs/fanout';
import { withDefaults } from '../../core/jobs/job-defaults';
import { boundedMap } from '../fanout';
import { activitiesFor, modelRoute, PRIORITY, type Steps } from '../routing';
import { OCR_FINE_GROUPS } from '../patches';
import type { PipelineContext } from './context';

/**
 * The pdf job type: prepare (resolve, validate, page range) → page groups on the media queue, at most twice the
 * media worker's slots of them in flight (core/jobs/fanout.ts), each heartbeating its cursor and reusing pages already
 * read → assemble, template, optional page images.
 */
export async function pdfPipeline(ctx: PipelineContext<'pdf'>): Promise<Record<string, unknown>> {
  const { jobId, parameters } = ctx.input;
  // Runs recorded before the bound scheduled every page group at once, without a fairness key.
  const bounded = patched('bounded-fanout');
  const media = activitiesFor({ jobId, fair: bounded, priority: PRIORITY.first });
  // Assembly asks the model when a template is given.
  const io = activitiesFor({ jobId, model: modelRoute(Boolean(parameters.template)) });
  const method = withDefaults('pdf', parameters).extraction_method;
  if (method === 'native' && patched('pdf-native-one-step')) return nativePipeline(ctx, media, io);
  ctx.progress('prepare', 2, 'Reading the document');
  const prep = await media.preparePdf({ jobId, parameters });
  ctx.log('info', `${prep.pageCount} page(s); reading ${prep.pages.length} with ${method}`);
  const size = (patched(OCR_FINE_GROUPS) ? PDF_PAGE_GROUP_FINE : PDF_PAGE_GROUP)[method] ?? 2;
  const groups: number[][] = [];
  for (let i = 0; i < prep.pages.length; i += size) groups.push(prep.pages.slice(i, i + size));
  let done = 0;
  const languages = String(parameters.ocr_language ?? parameters.source_language ?? '') || undefined;
  const fanout = mediaFanout(prep.mediaSlots);
  // A job that fits in one wave goes ahead of big jobs' backlogs (routing.ts PRIORITY).
  // A vision model's outage is waited out (remoteMediaCall); local OCR keeps cpuBound's 5 attempts.
  const pageSteps = activitiesFor({
    jobId,
    fair: bounded,
    priority: groups.length <= fanout ? PRIORITY.small : PRIORITY.big,
    remoteEngine: method === 'vision_llm',
  });
  const readGroup = async (pages: number[]) => {
    const r = await pageSteps.extractPdfPages({
      jobId,
      inputKey: prep.inputKey,
      sha256: prep.sha256,
      pages,
      method,
      languages,
      // The options a page group needs, in its input (before: a note `preparePdf` wrote, pdf-options.json).
      useCache: parameters.use_cache !== false,
      markdown: parameters.output_format === 'markdown',
    });
    done += pages.length;
    ctx.progress(
      'pages',
      5 + Math.floor((85 * done) / prep.pages.length),
      `${done} of ${prep.pages.length} page(s) read`,
    );
    return r;
  };
  const outcomes = bounded ? await boundedMap(groups, fanout, readGroup) : await Promise.all(groups.map(readGroup));
  const reused = outcomes.reduce((a, o) => a + o.pages.filter((p) => p.reused).length, 0);
  if (reused) ctx.log('info', `${reused} page(s) reused from earlier work`);
  const images = parameters.includeImages
    ? await pageSteps.renderPdfImages({ jobId, inputKey: prep.inputKey, sha256: prep.sha256, pages: prep.pages })
    : undefined;
  ctx.progress('assemble', 95, 'Assembling the text');
  const fin = await io.finishPdf({
    jobId,
    parameters,
    meta: { pageCount: prep.pageCount, title: prep.title, author: prep.author, pages: prep.pages },
    images,
    llm: outcomes.map((o) => o.llm),
    sha256: prep.sha256,
  });
  return fin.results;
}

/**
 * `native` in one media step: reading a text layer is quick (pdftotext about 0.5 ms a page), so preparing,
 * reading and writing the results happen in one activity. A template or page images add the assembly step.
 */
async function nativePipeline(ctx: PipelineContext<'pdf'>, media: Steps, io: Steps): Promise<Record<string, unknown>> {
  const { jobId, parameters } = ctx.input;
  const finish = !parameters.template && !parameters.includeImages;
  ctx.progress('pages', 5, 'Reading the text layer');
  const read = await media.readPdfText({ jobId, parameters, finish });
  ctx.log('info', `${read.meta.pageCount} page(s); read ${read.meta.pages.length} with native`);
  if (read.results) return read.results;
  const { meta, inputKey, sha256, contentsKey } = read;
  const images = parameters.includeImages
    ? await media.renderPdfImages({ jobId, inputKey, sha256, pages: meta.pages })
    : undefined;
  ctx.progress('assemble', 95, 'Assembling the text');
  const fin = await io.finishPdf({ jobId, parameters, meta, images, llm: [], contentsKey, sha256 });
  return fin.results;
}
