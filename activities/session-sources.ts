import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { readCache, writeCache } from '../core/stores/cache';
import { SESSION_TRANSCRIPT_CACHE_OPERATION, sessionTranscriptCacheKey } from '../core/stores/cache-keys';
import { AppError } from '../core/errors';
import type { SessionParams } from '../core/jobs/job-params';
import { readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { ARCHIVE_DATA_FIELDS, readJsonWithout } from '../core/results/json-base64';
import { resultData } from '../core/results/job-results';
import { jobResultsKey, jobStepKey } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import { downloadToFile } from '../providers/http/download';
import { convertHtmlToMarkdown } from '../providers/html';
import type { ActivityDeps } from './deps';
import { transcriptSegments, type TimedSegment } from '../domain/chunks/session-times';
import {
  SESSION_SEGMENTS,
  SESSION_STEP,
  sessionTextKey,
  type SessionAttachment,
  type SessionPlan,
} from './session-types';
import { fullParameters, heartbeating, runStep } from './job-steps';
import { outboundPolicy } from '../providers/http/ssrf';

/** The page readers (cheerio), loaded with the first session page: a worker that reads none never loads them. */
const pageHtml = () => import('./session-html');

/** At most this many PDFs are taken from an attachments page. */
export const MAX_SESSION_ATTACHMENTS = 10;
/** Video platforms whose pages go through the hosted path (yt-dlp) rather than a plain download. */
const HOSTED_HOSTS = /(^|\.)(youtube\.com|youtu\.be|vimeo\.com|dailymotion\.com|media\.ccc\.de|peertube\.[a-z.]+)$/i;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A transcript cache entry: the text, the video job that made it and, since they are kept, its segments. */
interface TranscriptEntry {
  text: string;
  video_job_id: string;
  segments?: unknown;
}

/** A file name for an attachment from its URL: the last path segment without `.pdf`, or `attachment-<n>`. */
function attachmentName(url: string, index: number, taken: Set<string>): string {
  let base = '';
  try {
    base = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '').replace(/\.pdf$/i, '');
  } catch {
    /* a name is made up below */
  }
  base =
    base
      .replace(/[^A-Za-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || `attachment-${index + 1}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

/** The first `n` bytes of a file (fewer when it is shorter). */
async function fileHead(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * The session's inputs (spec §4.6 steps 1 to 4): the plan (child job ids), the page, the video's transcript and the
 * attachments. Each is a step of the job kept under it (`runStep`), so a retry, a dead worker's successor or a
 * `restart` continues after the last finished step.
 */
export function createSessionSourceActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const policy = outboundPolicy(config);
  const maxBytes = config.MAX_UPLOAD_MB * 1024 * 1024;
  const scratch = scratchAt(config.scratchDir);

  const transcriptCacheKey = (p: SessionParams) =>
    sessionTranscriptCacheKey(str(p.video_url), str(p.source_language), deps.speech?.describe().model ?? '');

  /** Downloads `url` into a scratch directory and hands the file to `work`. */
  const fetched = <T>(
    url: string,
    accept: string[],
    signal: AbortSignal,
    work: (file: { path: string; mime: string; finalUrl: string; sha256: string }) => Promise<T>,
  ) =>
    scratch.withDir('session-', async (dir) =>
      work(
        await downloadToFile(url, path.join(dir, 'download'), { policy, maxBytes, timeoutMs: 120_000, signal, accept }),
      ),
    );

  return {
    /**
     * The run's plan: the ids of the child jobs (a video job, the PDF jobs come with the attachments), kept so a
     * restart reuses them and their finished steps, and which steps are already done (a restart skips their children).
     */
    async planSession({ jobId, parameters }: { jobId: string; parameters: SessionParams }): Promise<SessionPlan> {
      const p = await fullParameters(store, jobId, parameters);
      const { value } = await runStep(store, jobId, SESSION_STEP.plan, async () => ({
        videoJobId: `job-${randomUUID()}`,
      }));
      const done = async (step: string) => (await store.stat(jobStepKey(jobId, step))) !== null;
      let transcriptCached = false;
      if (p.video_url && p.use_cache !== false && !(await done(SESSION_STEP.transcript))) {
        transcriptCached =
          (await readCache<{ text: string }>(store, SESSION_TRANSCRIPT_CACHE_OPERATION, transcriptCacheKey(p))) !==
          null;
      }
      const hosted = (() => {
        try {
          return HOSTED_HOSTS.test(new URL(str(p.video_url)).hostname);
        } catch {
          return false;
        }
      })();
      return {
        videoJobId: value.videoJobId,
        hosted,
        transcriptDone: (await done(SESSION_STEP.transcript)) || transcriptCached,
        attachmentsDone: await done(SESSION_STEP.attachmentsText),
      };
    },

    /** Step 2: the session page through the SSRF-guarded download, its main content as Markdown. */
    async fetchSessionPage({
      jobId,
      parameters,
    }: {
      jobId: string;
      parameters: SessionParams;
    }): Promise<{ chars: number; reused: boolean }> {
      const p = await fullParameters(store, jobId, parameters);
      const r = await runStep(store, jobId, SESSION_STEP.page, () =>
        heartbeating((signal) =>
          fetched(str(p.url), ['text/html', 'application/xhtml', 'text/plain'], signal, async (f) => {
            const raw = await readFile(f.path, 'utf8');
            const markdown =
              f.mime === 'text/plain'
                ? raw.trim()
                : await convertHtmlToMarkdown((await pageHtml()).mainContent(raw), signal);
            await store.put(sessionTextKey(jobId, SESSION_STEP.page), markdown, {
              mime: 'text/markdown; charset=utf-8',
            });
            return { chars: markdown.length };
          }),
        ),
      );
      return { ...r.value, reused: r.reused };
    },

    /**
     * Step 3's end: the transcript of the video job (or of the transcript cache), kept under the job and written to
     * the transcript cache (video URL + source language + speech model), with its segments' times where they time
     * that text (`transcriptSegments`): the grounding and the chunks of the session are timed by them.
     */
    async collectSessionTranscript({
      jobId,
      parameters,
      videoJobId,
    }: {
      jobId: string;
      parameters: SessionParams;
      videoJobId: string;
    }) {
      const p = await fullParameters(store, jobId, parameters);
      const key = transcriptCacheKey(p);
      const r = await runStep(store, jobId, SESSION_STEP.transcript, async () => {
        let text: string | undefined;
        // The segments' times, when they time this text (an entry written before they were kept has none).
        let segments: TimedSegment[] | null = null;
        let fromCache = false;
        if (p.use_cache !== false) {
          const hit = await readCache<TranscriptEntry>(store, SESSION_TRANSCRIPT_CACHE_OPERATION, key);
          if (hit) [text, segments, fromCache] = [hit.text, transcriptSegments(hit.text, hit.segments), true];
        }
        if (text === undefined) {
          if (!(await store.stat(jobResultsKey(videoJobId))))
            throw new AppError('INTERNAL_ERROR', 'The video job left no results.', { video_job_id: videoJobId });
          const data = resultData(await readBlobJson(store, jobResultsKey(videoJobId)));
          text = str(data.transcription);
          segments = transcriptSegments(text, data.segments);
          await writeCache(store, SESSION_TRANSCRIPT_CACHE_OPERATION, key, {
            text,
            video_job_id: videoJobId,
            ...(segments ? { segments } : {}),
          } satisfies TranscriptEntry);
        }
        if (segments) await writeBlobJson(store, sessionTextKey(jobId, SESSION_SEGMENTS), segments);
        await store.put(sessionTextKey(jobId, SESSION_STEP.transcript), text, { mime: 'text/plain; charset=utf-8' });
        return { chars: text.length, from_cache: fromCache };
      });
      return { ...r.value, reused: r.reused };
    },

    /**
     * Step 4's start: `attachments_url` downloaded (a PDF, or an HTML page whose PDF links are downloaded, at most
     * {@link MAX_SESSION_ATTACHMENTS}), each PDF put under the job with the id of the PDF job that reads it.
     */
    async fetchSessionAttachments({
      jobId,
      parameters,
    }: {
      jobId: string;
      parameters: SessionParams;
    }): Promise<{ files: SessionAttachment[]; reused: boolean }> {
      const p = await fullParameters(store, jobId, parameters);
      const r = await runStep(store, jobId, SESSION_STEP.attachments, () =>
        heartbeating(async (signal) => {
          const files: SessionAttachment[] = [];
          const taken = new Set<string>();
          const keep = async (file: string, url: string, sha256: string) => {
            const index = files.length;
            const name = attachmentName(url, index, taken);
            const ref = await store.put(sessionTextKey(jobId, `attachment-${index + 1}.pdf`), createReadStream(file), {
              mime: 'application/pdf',
              sha256,
            });
            files.push({ name, url, key: ref.key, sha256: ref.sha256, pdfJobId: `job-${randomUUID()}` });
          };
          // The first five bytes only: an attachment may be hundreds of MB.
          const isPdf = async (file: string, mime: string) =>
            mime === 'application/pdf' || (await fileHead(file, 5)).toString('latin1') === '%PDF-';
          await fetched(
            str(p.attachments_url),
            ['application/pdf', 'text/html', 'application/xhtml'],
            signal,
            async (f) => {
              if (await isPdf(f.path, f.mime)) return keep(f.path, f.finalUrl, f.sha256);
              const links = (await pageHtml())
                .pdfLinks(await readFile(f.path, 'utf8'), f.finalUrl)
                .slice(0, MAX_SESSION_ATTACHMENTS);
              for (const link of links) {
                await fetched(link, ['application/pdf'], signal, async (pdf) => {
                  if (!(await isPdf(pdf.path, pdf.mime)))
                    throw new AppError(
                      'INVALID_FORMAT',
                      'An attachment linked from the attachments page is not a PDF.',
                      {
                        error_type: 'not_pdf',
                        supported_formats: ['pdf'],
                      },
                    );
                  await keep(pdf.path, pdf.finalUrl, pdf.sha256);
                });
              }
            },
          );
          return { files };
        }),
      );
      return { files: r.value.files, reused: r.reused };
    },

    /** Step 4's end: the text the PDF jobs extracted, one section per attachment, kept under the job. */
    async collectSessionAttachments({ jobId, files }: { jobId: string; files: SessionAttachment[] }) {
      const r = await runStep(store, jobId, SESSION_STEP.attachmentsText, async () => {
        const parts: string[] = [];
        for (const f of files) {
          // Only the text is wanted: the images archive's Base64 (hundreds of MB) is read past, never held.
          const data = resultData(await readJsonWithout(store, jobResultsKey(f.pdfJobId), ARCHIVE_DATA_FIELDS));
          parts.push(`### ${f.name}\n\n${str(data.extracted_text).trim()}`);
        }
        const text = parts.join('\n\n');
        await store.put(sessionTextKey(jobId, SESSION_STEP.attachmentsText), text, {
          mime: 'text/plain; charset=utf-8',
        });
        return { chars: text.length };
      });
      return { ...r.value, reused: r.reused };
    },
  };
}
