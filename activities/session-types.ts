import { BlobNotFoundError, readBlobBuffer, readBlobJson, type BlobStore } from '../core/stores/blob-store';
import { jobInternalKey } from '../core/stores/records';
import type { TimedSegment } from '../domain/chunks/session-times';

/** The steps of a session job, each kept under the job by `runStep` (their names are part of stored state). */
export const SESSION_STEP = {
  plan: 'session-plan',
  page: 'session-page',
  transcript: 'session-transcript',
  attachments: 'session-attachments',
  pages: 'session-page-images',
  attachmentsText: 'session-attachments-text',
  template: 'session-template',
  output: 'session-output',
  record: 'session-record',
} as const;

/** What `planSession` answers: the video job's id and which steps a restarted run may skip. */
export interface SessionPlan {
  videoJobId: string;
  /** The video URL is a page of a video platform (the hosted path, yt-dlp). */
  hosted: boolean;
  /** The transcript is kept under the job or in the transcript cache: no video job needed. */
  transcriptDone: boolean;
  /** The attachments' text is kept under the job: no PDF jobs needed. */
  attachmentsDone: boolean;
}

/** One downloaded attachment: its blob under the session job and the PDF job that reads it. */
export interface SessionAttachment {
  /** Key-safe name taken from the URL (asset names start with it). */
  name: string;
  url: string;
  key: string;
  sha256: string;
  pdfJobId: string;
}

/** Where a session step keeps its text (page Markdown, transcript, attachment text, filled template). */
export const sessionTextKey = (jobId: string, name: string): string => jobInternalKey(jobId, `session/${name}`);

/** A kept text, '' when its step did not run. */
export async function readSessionText(store: BlobStore, jobId: string, name: string): Promise<string> {
  try {
    return (await readBlobBuffer(store, sessionTextKey(jobId, name))).toString('utf8');
  } catch (e) {
    if (e instanceof BlobNotFoundError) return '';
    throw e;
  }
}

/**
 * A segment of the session's transcript with its times and, where the speech engine timed them, its words: what the
 * transcript's grounding and the chunks are timed by (`timedTexts`, domain/chunks/session-times.ts).
 */
export type SessionSegment = TimedSegment;

/** Where the transcript's segments are kept beside its text (absent: the times are not known). */
export const SESSION_SEGMENTS = 'transcript-segments.json';

/** The transcript's kept segments; null when none were kept (no video, a translated text, an older job or entry). */
export async function readSessionSegments(store: BlobStore, jobId: string): Promise<SessionSegment[] | null> {
  try {
    return await readBlobJson<SessionSegment[]>(store, sessionTextKey(jobId, SESSION_SEGMENTS));
  } catch (e) {
    if (e instanceof BlobNotFoundError) return null;
    throw e;
  }
}
