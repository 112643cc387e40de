/**
 * The chaos tests' mixed batch: jobs of every kind (native and OCR PDFs, recordings of several chunks, model-backed
 * transformer operations, sessions from a local site), each with a webhook and with what its finished job must hold
 * (its own marker, its own words, the LLM double's answer for its own input). Kinds are spread evenly through the
 * batch, so every stretch of it has work of every kind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import {
  nativePdfs,
  recordings,
  scannedPdfs,
  TEMPLATE_CONTENT,
  templateText,
  translationText,
  wordsOf,
} from './chaos-inputs';
import { doubleContent } from '../servers/llm-double';

export type ChaosKind = 'native' | 'scan' | 'audio' | 'translate' | 'template' | 'session';

export interface ChaosJob {
  kind: ChaosKind;
  /** The client's id for its webhook (`webhook.jobId`). */
  clientId: string;
  spec: { job_type: string; parameters: Record<string, unknown>; webhook: { url: string; jobId: string } };
  /** Checks the finished job (GET /api/jobs/{id} `data`) holds this job's own result. */
  check(job: any): void;
  jobId?: string;
}

/** Items of every list spread evenly: item i of a list of n sits at (i + offset) / n of the way through. */
export function spreadEvenly<T>(lists: { items: T[]; offset: number }[]): T[] {
  const keyed = lists.flatMap(({ items, offset }, l) =>
    items.map((item, i) => ({ item, key: (i + offset) / items.length, l })),
  );
  return keyed.sort((a, b) => a.key - b.key || a.l - b.l).map((k) => k.item);
}

/** The finished job's data for the synchronous endpoint's shape (`results` merged as the API answers it). */
const text = (job: any): string => String(job.results?.structured_data?.extracted_text ?? '');

/** The answer the LLM double gives to a request whose user message is `user` (text mode). */
const echo = (user: string) => doubleContent({ messages: [{ role: 'user', content: user }] });

export interface BatchCounts {
  native: number;
  scan: number;
  audio: number;
  translate: number;
  template: number;
  session: number;
}

/** Builds the inputs under `dir` and the batch's jobs. */
export async function chaosBatch(opts: {
  dir: string;
  counts: BatchCounts;
  hookUrl: string;
  siteBase?: string;
}): Promise<ChaosJob[]> {
  const { dir, counts, hookUrl } = opts;
  let n = 0;
  const webhook = () => ({ url: hookUrl, jobId: `client-${++n}` });
  const job = (kind: ChaosKind, job_type: string, parameters: Record<string, unknown>, check: ChaosJob['check']) => {
    const hook = webhook();
    return { kind, clientId: hook.jobId, spec: { job_type, parameters, webhook: hook }, check };
  };

  const natives = nativePdfs(path.join(dir, 'native'), counts.native).map((d) =>
    job('native', 'pdf', { filename: d.file, extraction_method: 'native', use_cache: false }, (j) =>
      expect(text(j), `native PDF ${d.marker}`).to.include(d.marker),
    ),
  );
  const scans = (await scannedPdfs(path.join(dir, 'scan'), counts.scan)).map((d) =>
    job(
      'scan',
      'pdf',
      { filename: d.file, extraction_method: 'local_ocr', ocr_language: 'en', use_cache: false },
      (j) => {
        const pages = j.results.structured_data.metadata.text_contents as { page: number; text: string }[];
        expect(pages.map((p) => p.page)).to.deep.equal([1, 2]);
        for (const p of pages) expect(p.text, `scan ${d.marker} page ${p.page}`).to.include(d.marker);
      },
    ),
  );
  const audios = (await recordings(path.join(dir, 'audio'), counts.audio)).map((r) =>
    job('audio', 'audio', { filename: r.file, source_language: 'en', target_language: 'en', use_cache: false }, (j) => {
      const heard = wordsOf(String(j.results.original_text));
      const said = `${path.basename(r.file)}: ${j.results.original_text}`;
      for (const w of r.words) expect(heard.has(w), `'${w}' in ${said}`).to.equal(true);
      for (const w of r.foreign) expect(heard.has(w), `another recording's '${w}' in ${said}`).to.equal(false);
    }),
  );
  const translations = Array.from({ length: counts.translate }, (_, i) => {
    const t = translationText(i);
    return job(
      'translate',
      'transformer',
      { operation: 'text', text: t, source_language: 'de', target_language: 'en', use_cache: false },
      (j) => expect(j.results.translated_text, `translation of CHAOS-T${i}`).to.equal(echo(t).trim()),
    );
  });
  const templates = Array.from({ length: counts.template }, (_, i) => {
    const t = templateText(i);
    const marker = `CHAOS-M${i}`;
    return job(
      'template',
      'transformer',
      {
        operation: 'template',
        text: t,
        template_content: TEMPLATE_CONTENT,
        source_language: 'en',
        target_language: 'en',
        use_cache: false,
      },
      (j) => {
        expect(j.results.template_fields, `template fields of ${marker}`).to.deep.equal({
          title: `title ${marker}`,
          gist: `gist ${marker}`,
        });
        expect(j.results.transformed_text).to.equal(`# title ${marker}\n\ngist ${marker}`);
      },
    );
  });
  const sessions = Array.from({ length: opts.siteBase ? counts.session : 0 }, (_, i) => {
    const slug = `chaos-s${i}`;
    return job(
      'session',
      'session',
      {
        event: 'Chaos',
        session: `Talk ${i}`,
        url: `${opts.siteBase}/s/${slug}`,
        filename: slug,
        track: 'Main',
        source_language: 'en',
        target_language: 'en',
        use_cache: false,
      },
      (j) => {
        const md = String(j.results.output.markdown_content);
        expect(md, `session ${slug}`).to.include(`# title ${slug}`);
      },
    );
  });
  return spreadEvenly<ChaosJob>([
    { items: audios, offset: 0.2 },
    { items: scans, offset: 0.3 },
    { items: natives, offset: 0.5 },
    { items: translations, offset: 0.4 },
    { items: templates, offset: 0.6 },
    { items: sessions, offset: 0.5 },
  ]);
}

/** Model-call journal entries kept under the jobs of a local blob store (`jobs/<id>/internal/model-calls/`). */
export function journalEntries(blobsObjects: string): Map<string, number> {
  const byJob = new Map<string, number>();
  const jobs = path.join(blobsObjects, 'jobs');
  if (!fs.existsSync(jobs)) return byJob;
  for (const id of fs.readdirSync(jobs)) {
    const dir = path.join(jobs, id, 'internal', 'model-calls');
    if (fs.existsSync(dir)) byJob.set(id, fs.readdirSync(dir).filter((f) => f.endsWith('.json')).length);
  }
  return byJob;
}
