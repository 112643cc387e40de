import type { Context } from 'koa';
import type { BlobStore } from '../../core/stores/blob-store';
import { AppError } from '../../core/errors';
import { JOB_ID_PATTERN } from '../../core/jobs/ids';
import { jobOutputPrefix } from '../../core/stores/records';
import { attachment } from './archive';

/**
 * A client path resolved to the job output folder it names: the job and the path inside its output ('' = the folder).
 */
interface JobFileTarget {
  jobId: string;
  rel: string;
}

/** A segment of a blob key (core/stores/blob-store.ts): anything else cannot name a stored file. */
const SEGMENT = /^[A-Za-z0-9._\-]+$/;
/** A backslash, an ASCII control character (U+0000 to U+001F) or DEL: none belongs in a blob path. */
const unsafeChar = (c: string) => c === '\\' || c < ' ' || c === '\u007f';
const forbidden = (path: string, reason: string) =>
  new AppError('FORBIDDEN', `The path ${reason}; only the files jobs produced can be downloaded.`, { path });

/**
 * Resolves a path as the API hands it out (`assets`, `target_dir`: `jobs/<job_id>/out/<file>`) or in the legacy form
 * `<job_id>/<file>`, given raw from the URL: each segment percent-decoded once (so an encoded `/` separates too).
 * Whatever would leave a job's output folder is refused with 403 FORBIDDEN before the store is asked: `.` and `..`
 * segments, empty segments (absolute paths, `//`), backslashes, control characters, and well-formed paths elsewhere
 * in the store (records, a job's internal state). Characters no stored file can hold answer 404.
 */
export function resolveJobFilePath(rawPath: string): JobFileTarget {
  let decoded: string;
  try {
    decoded = rawPath.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The path is not valid percent-encoding.', {
      issues: [{ path: 'path', message: 'invalid percent-encoding' }],
    });
  }
  if (decoded === '')
    throw new AppError('VALIDATION_ERROR', 'A file path is required.', {
      issues: [{ path: 'path', message: 'required' }],
    });
  if ([...decoded].some(unsafeChar)) throw forbidden(decoded, 'holds a backslash or a control character');
  // One trailing slash names the folder it ends (`target_dir/`).
  const segments = (decoded.endsWith('/') ? decoded.slice(0, -1) : decoded).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    throw forbidden(decoded, 'is absolute or holds empty, "." or ".." segments');
  let jobId: string;
  let rest: string[];
  if (segments[0] === 'jobs' && segments.length >= 3 && JOB_ID_PATTERN.test(segments[1]) && segments[2] === 'out') {
    [jobId, rest] = [segments[1], segments.slice(3)];
  } else if (JOB_ID_PATTERN.test(segments[0])) {
    [jobId, rest] = [segments[0], segments.slice(1)];
  } else {
    throw forbidden(decoded, "lies outside every job's output folder");
  }
  if (!rest.every((s) => SEGMENT.test(s)) || decoded.length > 400)
    throw new AppError('FILE_NOT_FOUND', 'No such file.', { path: decoded });
  return { jobId, rel: rest.join('/') };
}

/** What a folder path answers: the files under it, each with the path that downloads it. */
interface FolderListing {
  path: string;
  files: { path: string; size: number; mime: string }[];
}

/**
 * Answers a job file: the file itself with its stored media type, or for a folder (`target_dir`, or a folder inside
 * it) a JSON listing of the files under it. 404 FILE_NOT_FOUND when neither exists.
 */
export async function sendJobFile(ctx: Context, store: BlobStore, rawPath: string): Promise<void> {
  const { jobId, rel } = resolveJobFilePath(rawPath);
  const prefix = jobOutputPrefix(jobId);
  const st = rel === '' ? null : await store.stat(prefix + rel);
  if (st) {
    ctx.type = st.mime;
    ctx.length = st.size;
    ctx.set('Content-Disposition', attachment(rel.split('/').pop()!));
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = await store.get(st.key);
    return;
  }
  const folder = rel === '' ? prefix : `${prefix}${rel}/`;
  const blobs = await store.list(folder);
  if (blobs.length === 0)
    throw new AppError('FILE_NOT_FOUND', 'No such file or folder.', { path: `${prefix}${rel}`.replace(/\/$/, '') });
  const listing: FolderListing = {
    path: folder.slice(0, -1),
    files: blobs.map((b) => ({ path: b.key, size: b.size, mime: b.mime })),
  };
  ctx.body = { status: 'success', data: listing };
}
