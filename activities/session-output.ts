import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readBlobJson } from '../core/stores/blob-store';
import { withDefaults } from '../core/jobs/job-defaults';
import type { SessionParams } from '../core/jobs/job-params';
import { resultPreview, writeJobResults, type JobFields } from '../core/results/job-results';
import { jobOutputKey, jobStepKey } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import {
  putCachedSession,
  putSessionRecord,
  sanitizeName,
  sessionDir,
  sessionPath,
} from '../core/stores/session-store';
import { zipStream, type ArchiveEntry } from '../core/stores/zip';
import { UsageRecorder } from '../providers/llm';
import type { ActivityDeps } from './deps';
import { applyTemplate, clip } from './text-operations';
import { documentChunks } from '../capabilities/chunks';
import { sessionGrounding } from '../capabilities/grounding';
import type { JobGrounding, SessionPart } from '../core/results/result-schemas-chunks';
import { timeSessionChunks } from '../domain/chunks/session-times';
import type { TextPart } from '../domain/grounding/place';
import { jobModel } from './model-journal';
import {
  readSessionSegments,
  readSessionText,
  SESSION_STEP,
  sessionTextKey,
  type SessionAttachment,
} from './session-types';
import { fullParameters, heartbeating, runStep } from './job-steps';

/** A session's schedule and speakers: in its result's `input` and its record's metadata. */
const WHEN_AND_WHO: (keyof SessionParams)[] = [
  'day',
  'starttime',
  'endtime',
  'speakers',
  'speakers_url',
  'speakers_image_url',
];

/** The fields of `keys` that `p` sets, in that order (a session's input and record metadata). */
function definedFields(p: SessionParams, keys: (keyof SessionParams)[]): Partial<SessionParams> {
  return Object.fromEntries(keys.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));
}

/** The text given to the template, at most this many characters (page, transcript and attachments share it). */
export const SESSION_TEXT_CHARS = 24_000;
/** Page images are rendered for at most this many pages of each attachment. */
export const MAX_SESSION_PAGE_IMAGES = 100;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** Where a session's files go inside its job's output: the Markdown, its assets folder and the archive. */
export function sessionLayout(p: Record<string, unknown>) {
  const [event, lang, track, filename] = [str(p.event), str(p.target_language), str(p.track), str(p.filename)];
  const md = sessionPath(event, lang, track, filename);
  const base = md.slice(0, -'.md'.length);
  return { dir: sessionDir(event, lang, track).slice(0, -1), md, assets: `${base}-assets`, zip: `${base}.zip` };
}

/** The request's fields the template sees as context (spec §4.6: speakers, day, times...). */
function templateContext(p: Record<string, unknown>): Record<string, unknown> {
  const keys = [
    'event',
    'track',
    'session',
    'filename',
    'day',
    'starttime',
    'endtime',
    'url',
    'video_url',
    'attachments_url',
  ];
  return {
    ...Object.fromEntries(keys.map((k) => [k, str(p[k])])),
    speakers: list(p.speakers),
    speakers_url: list(p.speakers_url),
    speakers_image_url: list(p.speakers_image_url),
  };
}

/**
 * The template's input: the page, the transcript and the attachments' text under their headings, each trimmed and
 * clipped to its share; with where each part's text stands in it and where that text begins in the part's own (the
 * whitespace trimmed before it), so a grounded source is placed in its part (`sessionGrounding`).
 */
export function sessionInputParts(
  page: string,
  transcript: string,
  attachments: string,
): { text: string; parts: TextPart<SessionPart>[] } {
  const parts = (
    [
      ['page', 'Session page', page],
      ['transcript', 'Transcript of the recording', transcript],
      ['attachments', 'Slides and attachments', attachments],
    ] as const
  ).filter(([, , t]) => t.trim());
  const share = Math.floor(SESSION_TEXT_CHARS / Math.max(1, parts.length));
  let text = '';
  const layout: TextPart<SessionPart>[] = [];
  for (const [name, title, t] of parts) {
    text += `${text ? '\n\n' : ''}## ${title}\n\n`;
    const body = clip(t.trim(), share);
    layout.push({ name, start: text.length, end: text.length + body.length, offset: t.length - t.trimStart().length });
    text += body;
  }
  return { text, parts: layout };
}

/** The template's input text alone (see {@link sessionInputParts}). */
export const sessionInput = (page: string, transcript: string, attachments: string): string =>
  sessionInputParts(page, transcript, attachments).text;

/** `topic` and `tags` of the filled template: the model's fields, else the filled Markdown's frontmatter. */
export function topicAndTags(markdown: string, fields: Record<string, unknown>): { topic: string; tags: string[] } {
  let fm: Record<string, unknown> = {};
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(markdown);
  if (m) {
    try {
      const v = parseYaml(m[1]!);
      if (v && typeof v === 'object') fm = v as Record<string, unknown>;
    } catch {
      /* not YAML: the fields alone */
    }
  }
  const topicOf = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const tagsOf = (v: unknown) =>
    (Array.isArray(v) ? v : typeof v === 'string' && v.trim() ? v.split(',') : [])
      .map((t) => String(t).trim())
      .filter(Boolean);
  const tags = tagsOf(fields.tags);
  return { topic: topicOf(fields.topic) || topicOf(fm.topic), tags: tags.length ? tags : tagsOf(fm.tags) };
}

/** What the template step keeps under the job (JSON): steps kept before grounding read without it. */
interface TemplateStep {
  topic: string;
  tags: string[];
  llm: ReturnType<UsageRecorder['summary']>;
  /** With grounding=true: the fields, their sources placed in the session's parts, the unsupported fields. */
  grounding?: JobGrounding;
}

/**
 * Steps 4 (page images), 5 (the template), 6 (the files and results) and 7 (the session store) of a session job
 * (spec §4.6). The texts of the earlier steps are read from the job (`session-types.ts`).
 */
export function createSessionOutputActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const scratch = scratchAt(config.scratchDir);

  return {
    /** Every page of every attachment as a PNG in the session's assets folder (media queue: pdftoppm). */
    async renderSessionPages({
      jobId,
      parameters,
      files,
    }: {
      jobId: string;
      parameters: SessionParams;
      files: SessionAttachment[];
    }) {
      const p = await fullParameters(store, jobId, parameters);
      const layout = sessionLayout(p);
      // Heartbeats throughout: each attachment's scratch copy, its renders and their uploads.
      const r = await runStep(store, jobId, SESSION_STEP.pages, () =>
        heartbeating(async (signal) => {
          const assets: string[] = [];
          for (const f of files) {
            await scratch.withBlobFile(store, f.key, f.sha256, '.pdf', (pdf) =>
              scratch.withDir('session-pages-', async (dir) => {
                const { pageCount } = await deps.pdf.describe(pdf, { signal });
                for (let page = 1; page <= Math.min(pageCount, MAX_SESSION_PAGE_IMAGES); page++) {
                  const name = `${f.name}-page-${String(page).padStart(3, '0')}.png`;
                  const png = await deps.pdf.renderPagePng(pdf, page, path.join(dir, name), 100, {
                    signal,
                    maxPixels: config.MAX_IMAGE_PIXELS,
                  });
                  const key = jobOutputKey(jobId, `${layout.assets}/${name}`);
                  await store.putFile(key, png, { mime: 'image/png' });
                  assets.push(key);
                }
              }),
            );
          }
          return { assets };
        }),
      );
      return { images: r.value.assets.length, reused: r.reused };
    },

    /**
     * Step 5: the session template (`template`, default `Session`) in `target_language`, filled from the page, the
     * transcript and the attachments with the request's fields as context; `topic` and `tags` from its fields or
     * frontmatter. Model calls are journaled under the job, so a retry repeats none. With `grounding`, the values are
     * checked against that text and each source placed in its part, a transcript's in time where its segments are kept.
     */
    async fillSessionTemplate({
      jobId,
      parameters,
    }: {
      jobId: string;
      parameters: SessionParams;
    }): Promise<TemplateStep> {
      const p = await fullParameters(store, jobId, parameters);
      const { value } = await runStep<TemplateStep>(store, jobId, SESSION_STEP.template, async () => {
        const [page, transcript, attachments] = await Promise.all(
          [SESSION_STEP.page, SESSION_STEP.transcript, SESSION_STEP.attachmentsText].map((s) =>
            readSessionText(store, jobId, s),
          ),
        );
        const recorder = new UsageRecorder();
        const model = jobModel(deps.llm ? recorder.wrap(deps.llm) : null, store, jobId);
        const input = sessionInputParts(page, transcript, attachments);
        const r = await applyTemplate(model, {
          text: input.text,
          template: withDefaults('session', p).template,
          source_language: str(p.source_language),
          target_language: str(p.target_language),
          context: templateContext(p),
          grounding: p.grounding,
        });
        await store.put(sessionTextKey(jobId, 'session.md'), r.text, { mime: 'text/markdown; charset=utf-8' });
        const segments = p.grounding === true ? await readSessionSegments(store, jobId) : null;
        const grounding = sessionGrounding(r.output, input.parts, segments && { text: transcript, segments });
        return {
          ...topicAndTags(r.text, (r.output.template_fields ?? {}) as Record<string, unknown>),
          llm: recorder.summary(),
          ...(grounding ? { grounding } : {}),
        };
      });
      return value;
    },

    /**
     * Step 6: `sessions/<event>/<lang>/<track>/<filename>.md` in the job's output (links to the page images at its
     * end), the assets beside it, with `create_archive` a ZIP of both; then the results (spec §4.6 `data.output`,
     * with `markdown_file` and `attachments` also at the top for the webhook and the legacy job).
     */
    async writeSessionOutput({ jobId, parameters }: { jobId: string; parameters: SessionParams }) {
      // Reads the texts and writes the files, with `create_archive` a ZIP of every page image: heartbeating throughout.
      return heartbeating(async () => {
        const p = await fullParameters(store, jobId, parameters);
        const layout = sessionLayout(p);
        const template = await readBlobJson<TemplateStep>(store, jobStepKey(jobId, SESSION_STEP.template));
        const [filled, transcript, attachmentsText] = await Promise.all(
          ['session.md', SESSION_STEP.transcript, SESSION_STEP.attachmentsText].map((s) =>
            readSessionText(store, jobId, s),
          ),
        );
        // With grounding: the page's Markdown, which its sources' offsets are into (the others' parts are here already).
        const pageText = p.grounding === true ? await readSessionText(store, jobId, SESSION_STEP.page) : undefined;
        const images = (await store.stat(jobStepKey(jobId, SESSION_STEP.pages)))
          ? (await readBlobJson<{ assets: string[] }>(store, jobStepKey(jobId, SESSION_STEP.pages))).assets
          : [];
        const relative = (key: string) => key.slice(jobOutputKey(jobId, `${layout.dir}/`).length);
        const markdown = images.length
          ? `${filled.trimEnd()}\n\n## Attachments\n\n${images.map((k) => `![${path.posix.basename(k)}](${relative(k)})`).join('\n')}\n`
          : filled;
        const mdKey = jobOutputKey(jobId, layout.md);
        await store.put(mdKey, markdown, { mime: 'text/markdown; charset=utf-8' });
        let archive: string | null = null;
        if (p.create_archive === true) {
          archive = jobOutputKey(jobId, layout.zip);
          const entries: ArchiveEntry[] = [];
          for (const key of [mdKey, ...images]) entries.push({ name: relative(key), blob: (await store.stat(key))! });
          await store.put(archive, zipStream(store, entries, { job_id: jobId, event: p.event, session: p.session }), {
            mime: 'application/zip',
          });
        }
        const targetDir = jobOutputKey(jobId, layout.dir);
        const output = {
          markdown_file: mdKey,
          markdown_content: markdown,
          attachments: images,
          ...(pageText !== undefined ? { page_text: pageText } : {}),
          video_transcript: transcript,
          attachments_text: attachmentsText,
          target_dir: targetDir,
          archive_file: archive,
          topic: template.topic,
          tags: template.tags,
        };
        const input = definedFields(p, [
          'event',
          'session',
          'url',
          'filename',
          'track',
          ...WHEN_AND_WHO,
          'video_url',
          'attachments_url',
          'source_language',
          'target_language',
          'template',
          'grounding',
        ]);
        // Chunks of the session's Markdown (contract §14), each naming its session and track, and timed where its
        // words are the transcript's (when the transcript's segments are kept).
        const { chunks, chunking } = documentChunks(markdown, [], p);
        const timed = chunks && timeSessionChunks(chunks, await readSessionSegments(store, jobId));
        const data = {
          input,
          output,
          markdown_file: mdKey,
          attachments: images,
          ...(template.grounding ?? {}),
          ...(timed ? { chunks: timed.map((c) => ({ ...c, session: p.session, track: p.track })), chunking } : {}),
        };
        const job: JobFields = {
          structured_data: {
            extracted_text: markdown,
            metadata: {
              event: p.event,
              session: p.session,
              track: p.track,
              language: p.target_language,
              topic: template.topic,
              tags: template.tags,
            },
          },
          assets: [mdKey, ...images, ...(archive ? [archive] : [])],
          target_dir: targetDir,
          llm_info: template.llm,
          from_cache: false,
        };
        await writeJobResults(store, jobId, data, job);
        return { results: resultPreview(job) };
      });
    },

    /** Step 7: the session record (tracks, events, topics and stories read it) and the cached session entry. */
    async recordSession({ jobId, parameters }: { jobId: string; parameters: SessionParams }) {
      const p = await fullParameters(store, jobId, parameters);
      const layout = sessionLayout(p);
      const template = await readBlobJson<TemplateStep>(store, jobStepKey(jobId, SESSION_STEP.template));
      const now = new Date().toISOString();
      const metadata = definedFields(p, [...WHEN_AND_WHO, 'source_language']);
      // The store keeps its own copy of the Markdown (sessions/<event>/<lang>/<track>/<file>.md): the job's output goes
      // when retention sweeps the job, the session record and what tracks, events and stories read from it stay.
      const storeKey = sessionPath(str(p.event), str(p.target_language), str(p.track), str(p.filename));
      await store.put(storeKey, await store.get(jobOutputKey(jobId, layout.md)), {
        mime: 'text/markdown; charset=utf-8',
      });
      await putSessionRecord(store, {
        event: str(p.event),
        track: str(p.track),
        session: str(p.session),
        language: str(p.target_language),
        filename: sanitizeName(str(p.filename).replace(/\.md$/i, ''), 'filename'),
        topic: template.topic,
        tags: template.tags,
        markdown_key: storeKey,
        metadata,
        source: {
          url: str(p.url),
          ...(p.video_url ? { video_url: str(p.video_url) } : {}),
          ...(p.attachments_url ? { attachments_url: str(p.attachments_url) } : {}),
        },
        job_id: jobId,
        processed_at: now,
      });
      await putCachedSession(store, {
        event: str(p.event),
        session: str(p.session),
        url: str(p.url),
        cached_at: now,
        track: str(p.track),
        language: str(p.target_language),
        job_id: jobId,
        markdown_file: jobOutputKey(jobId, layout.md),
      });
      return { recorded: true };
    },
  };
}
