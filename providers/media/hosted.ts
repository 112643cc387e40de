/**
 * Hosted-platform video downloads (spec §4.7 `hosted`, contract §7) with yt-dlp, spawned directly: no shell, no
 * configuration files, no cookies, no plugins, no JavaScript runtime and no remote components, one video (never a
 * playlist), bounded in time and size. The URL is checked with the SSRF classifier first (`checkTarget`), so a
 * private, loopback or metadata address is refused before yt-dlp starts unless the policy allows it. yt-dlp then
 * connects only through a loopback proxy of ours (providers/http/guard-proxy.ts) that checks every address it is
 * asked for, redirects, media and fragment URLs and DNS answers included, and connects to the checked address. Only
 * formats yt-dlp fetches itself over HTTP(S) are chosen, with its native downloader, and no post-processing runs
 * (`--fixup never`, one file, nothing merged): no ffmpeg, rtmpdump or other program of its own opens a connection
 * that would bypass the proxy.
 */
import { access, constants, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../core/errors';
import type { HostedVideoInfo } from '../../core/results/result-shapes';
import { downloadError } from '../http/download';
import { startGuardProxy } from '../http/guard-proxy';
import { checkTarget, type OutboundPolicy } from '../http/ssrf';
import { ToolExitError, ToolTimeoutError, runTool } from '../process/run-tool';

/** What the platform says about the video; null where it says nothing. */
export type HostedMetadata = HostedVideoInfo;

export interface HostedDownload {
  /** The downloaded media file, inside `outDir`. */
  file: string;
  metadata: HostedMetadata;
}

export interface HostedOptions {
  /** The yt-dlp binary (`ytDlpPath(config)`). */
  ytDlp: string;
  policy: OutboundPolicy;
  signal?: AbortSignal;
  /** Whole run; default 10 minutes. */
  timeoutMs?: number;
  /** Larger files are refused (413 `PAYLOAD_TOO_LARGE`); default 2 GB. */
  maxBytes?: number;
  /** `audio`: the best audio-only format when there is one (enough to transcribe); `best`: the best single file. */
  format?: 'audio' | 'best';
}

const INFO_FILE = 'info.json';
/** Protocols yt-dlp's native downloader fetches over HTTP(S) itself (through the proxy); rtmp, rtsp, mms and the like need programs of their own. */
const PROXIED = "[protocol~='^(https?|m3u8_native|m3u8|http_dash_segments)$']";
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The metadata of yt-dlp's info JSON. Pure. */
export function hostedMetadata(info: Record<string, unknown>): HostedMetadata {
  const views = num(info.view_count);
  return {
    video_id: str(info.id) ?? '',
    title: str(info.title) ?? str(info.fulltitle) ?? '',
    uploader: str(info.uploader) ?? str(info.channel) ?? str(info.creator),
    views: views === null ? null : Math.round(views),
    description: str(info.description),
    duration: num(info.duration),
  };
}

const hostedNotConfigured = (ytDlp: string, cause?: unknown) =>
  new AppError(
    'PROVIDER_NOT_CONFIGURED',
    'Hosted video downloads need yt-dlp, which is not installed (npm start installs it into the engine cache; or ' +
      'set YTDLP_PATH).',
    { provider: 'hosted_video', path: ytDlp },
    { cause },
  );

/** Resolves when yt-dlp can be run at `ytDlp`; else `PROVIDER_NOT_CONFIGURED` (503). */
export async function checkYtDlp(ytDlp: string): Promise<void> {
  try {
    await access(ytDlp, constants.X_OK);
  } catch (err) {
    throw hostedNotConfigured(ytDlp, err);
  }
}

/**
 * `retryable`: the platform is out for now (a timeout, an HTTP 408, 429 or 5xx), which the error boundary waits out.
 */
const upstream = (url: string, reason: string, message: string, cause?: unknown, retryable = false) =>
  new AppError(
    'UPSTREAM_ERROR',
    `The hosted video could not be downloaded: ${message}`,
    { provider: 'hosted_video', host: new URL(url).host, reason },
    { cause, retryable },
  );

/** yt-dlp's `HTTP Error 503: Service Unavailable` and the like, for statuses worth another try later. */
const outageInMessage = (message: string): boolean => /HTTP Error (408|429|5\d\d)\b/.test(message);

/** The last `ERROR:` line yt-dlp wrote, without its prefix. */
const ytDlpError = (stderr: string): string =>
  (
    stderr
      .split('\n')
      .filter((l) => l.startsWith('ERROR:'))
      .pop() ??
    stderr.trim().split('\n').pop() ??
    'yt-dlp failed'
  )
    .replace(/^ERROR:\s*/, '')
    .slice(0, 500);

/**
 * Downloads the video at `url` into `outDir` (which should be empty and is the caller's to remove) and reads its
 * metadata. Errors: `PROVIDER_NOT_CONFIGURED` without yt-dlp, `FORBIDDEN` for a refused target, `PAYLOAD_TOO_LARGE`
 * past `maxBytes`, `UPSTREAM_ERROR` when yt-dlp fails (an HTTP error, an unsupported page, a timeout).
 */
export async function downloadHosted(url: string, outDir: string, opts: HostedOptions): Promise<HostedDownload> {
  const maxBytes = opts.maxBytes ?? 2 * 1024 ** 3;
  try {
    await checkTarget(url, opts.policy);
  } catch (err) {
    throw downloadError(err, url, maxBytes);
  }
  await checkYtDlp(opts.ytDlp);
  const proxy = await startGuardProxy(opts.policy);
  try {
    return await runYtDlp(url, outDir, maxBytes, proxy.url, opts);
  } catch (err) {
    // yt-dlp saw the proxy's 403 as an HTTP error of its own: the refused target is the cause.
    const refused = proxy.refused();
    if (refused && !(err instanceof AppError && err.code === 'PAYLOAD_TOO_LARGE'))
      throw downloadError(refused, url, maxBytes);
    throw err;
  } finally {
    await proxy.close();
  }
}

async function runYtDlp(
  url: string,
  outDir: string,
  maxBytes: number,
  proxyUrl: string,
  opts: HostedOptions,
): Promise<HostedDownload> {
  const infoPath = path.join(outDir, INFO_FILE);
  const args = [
    ...[
      '--ignore-config',
      '--no-plugin-dirs',
      '--no-js-runtimes',
      '--no-remote-components',
      '--no-cookies',
      '--no-cache-dir',
    ],
    ...['--no-playlist', '--no-progress', '--no-mtime', '--no-part', '--restrict-filenames', '--socket-timeout', '30'],
    ...['--proxy', proxyUrl, '--downloader', 'native', '--fixup', 'never'],
    ...['-f', opts.format === 'audio' ? `bestaudio${PROXIED}/best${PROXIED}` : `best${PROXIED}`],
    ...['--max-filesize', String(maxBytes)],
    ...['--print-to-file', 'after_move:%()j', infoPath, '-o', path.join(outDir, 'media.%(ext)s'), '--', url],
  ];
  let stdout: string;
  try {
    // No engine watchdog: yt-dlp prints nothing while it downloads (`--no-progress`); a stalled connection ends at
    // `--socket-timeout`, the whole download at the timeout.
    const r = await runTool(opts.ytDlp, args, {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 600_000,
      maxStdoutBytes: 4 * 1024 * 1024,
      stallTimeoutMs: 0,
    });
    stdout = r.stdout.toString('utf8');
  } catch (err) {
    if (err instanceof ToolTimeoutError)
      throw upstream(url, 'timeout', `no answer within ${err.timeoutMs} ms`, err, true);
    if (err instanceof ToolExitError) {
      const said = ytDlpError(err.stderr);
      throw upstream(url, 'downloader', said, err, outageInMessage(said));
    }
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EACCES')
      throw hostedNotConfigured(opts.ytDlp, err);
    throw err;
  }
  const tooLarge = () =>
    new AppError('PAYLOAD_TOO_LARGE', `The hosted video is larger than the limit of ${maxBytes} bytes`, {
      limit_bytes: maxBytes,
    });
  const info = await readFile(infoPath, 'utf8').then(
    (s) => JSON.parse(s) as Record<string, unknown>,
    () => null,
  );
  if (!info) {
    if (/larger than max-filesize/.test(stdout)) throw tooLarge();
    throw upstream(url, 'no_media', 'yt-dlp finished without a media file');
  }
  const name = (await readdir(outDir)).find((f) => f.startsWith('media.'));
  const file = path.join(outDir, name ?? 'media');
  const size = name ? (await stat(file)).size : undefined;
  if (size === undefined) throw upstream(url, 'no_media', 'yt-dlp finished without a media file');
  if (size > maxBytes) throw tooLarge();
  return { file, metadata: hostedMetadata(info) };
}
