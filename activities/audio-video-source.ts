import { createReadStream } from 'node:fs';
import path from 'node:path';
import { ytDlpPath } from '../core/config/config';
import { readBlobJson } from '../core/stores/blob-store';
import type { VideoParams } from '../core/jobs/job-params';
import { jobInternalKey, jobStepKey } from '../core/stores/records';
import { copyBlob, scratchAt } from '../core/stores/scratch';
import { hostedVideoData, videoData, type HostedVideoInfo, type VideoPicture } from '../core/results/result-shapes';
import { downloadToFile } from '../providers/http/download';
import { checkDuration } from '../core/jobs/input-budgets';
import { transcribableVideo } from '../core/jobs/media-formats';
import { downloadHosted } from '../providers/media/hosted';
import type { createAudioResults, TranscriptionDone } from './audio-results';
import type { ActivityDeps } from './deps';
import { DOWNLOAD_WAIT_MS, jobInputBlob } from './input-blob';
import { fullParameters, heartbeating, runStep } from './job-steps';
import { outboundPolicy } from '../providers/http/ssrf';

/** What the video's first step found out, kept under the job (`runStep`) for `finishVideo`. */
interface VideoSource {
  input: { key: string; sha256: string };
  picture: VideoPicture;
  hosted: HostedVideoInfo | null;
}

const VIDEO_SOURCE_STEP = 'video-source';

/**
 * The video job type (spec §4.7): `fetchVideoInput` brings the video into the job (a URL through the SSRF-guarded
 * download, a hosted page through yt-dlp, a file as the audio job takes it) and probes it; the audio steps then
 * transcribe its sound, and `finishVideo` writes the §4.7 data.
 */
export function createVideoSourceActivities(deps: ActivityDeps, finish: ReturnType<typeof createAudioResults>) {
  const { store, config } = deps;
  const policy = outboundPolicy(config);
  const maxBytes = config.MAX_UPLOAD_MB * 1024 * 1024;
  const scratch = scratchAt(config.scratchDir);

  /** Downloads `url` into `dir`: the media file and, for a hosted page, the platform's metadata. */
  async function download(
    url: string,
    hosted: boolean,
    dir: string,
    signal: AbortSignal,
  ): Promise<{ file: string; info: HostedVideoInfo | null; sha256?: string }> {
    if (hosted) {
      const r = await downloadHosted(url, dir, { ytDlp: ytDlpPath(config), policy, signal, maxBytes });
      return { file: r.file, info: r.metadata };
    }
    const r = await downloadToFile(url, path.join(dir, 'video'), {
      policy,
      maxBytes,
      timeoutMs: DOWNLOAD_WAIT_MS,
      signal,
      accept: ['video/', 'audio/'],
    });
    return { file: r.path, info: null, sha256: r.sha256 };
  }

  return {
    /**
     * Puts the video into the job and reads its picture with ffprobe: `INVALID_FORMAT` for a container outside the
     * spec's list, a file without sound or without a picture. A step of the job: a retry or restart reuses it.
     * Returns only the input's blob (the metadata stays in the blob store, out of the history).
     */
    async fetchVideoInput({
      jobId,
      parameters,
    }: {
      jobId: string;
      parameters: VideoParams;
    }): Promise<{ key: string; sha256: string }> {
      const p = await fullParameters(store, jobId, parameters);
      const { value } = await runStep<VideoSource>(store, jobId, VIDEO_SOURCE_STEP, () =>
        heartbeating((signal) =>
          scratch.withDir('video-', async (dir) => {
            let input: { key: string; sha256: string };
            let file: string;
            let hosted: HostedVideoInfo | null = null;
            if (typeof p.url === 'string') {
              const got = await download(p.url, p.hosted === true, dir, signal);
              ({ file, info: hosted } = got);
              const ref = await store.put(jobInternalKey(jobId, 'input.media'), createReadStream(file), {
                mime: 'application/octet-stream',
                ...(got.sha256 ? { sha256: got.sha256 } : {}),
              });
              input = { key: ref.key, sha256: ref.sha256 };
            } else {
              input = await jobInputBlob(store, config.inputRoots, jobId, p, {
                name: 'input.media',
                mime: 'application/octet-stream',
              });
              file = await copyBlob(store, input.key, path.join(dir, 'input.media'));
            }
            const probe = await deps.media.probe(file, { signal });
            const picture = transcribableVideo(probe);
            checkDuration(probe, config.MAX_MEDIA_SECONDS);
            return { input, picture, hosted };
          }),
        ),
      );
      return value.input;
    },

    /** The end of a video job: the transcription's end (`finishTranscription`) with the §4.7 data. */
    async finishVideo(a: TranscriptionDone) {
      const source = await readBlobJson<VideoSource>(store, jobStepKey(a.jobId, VIDEO_SOURCE_STEP));
      return finish(a, (outcome) =>
        source.hosted ? hostedVideoData(outcome, source.hosted, source.picture) : videoData(outcome, source.picture),
      );
    },
  };
}
