import { expect } from 'chai';
import { AppError } from '../../core/errors';
import { frameTimes, parseFrameRequest } from '../../core/jobs/frame-request';
import {
  SUPPORTED_FORMATS,
  audioFormatOf,
  containerFormatOf,
  videoMetadata,
  type MediaProbe,
} from '../../core/jobs/media-formats';
import { parseProbe, parseRate } from '../../providers/media/probe';
import type { ChunkSpan } from '../../domain/engines/media';
import { type Silence, parseSilences, planChunks } from '../../providers/media/silence';

/** Every plan covers [0, duration] exactly: consecutive, non-empty, no gap, no overlap. */
function expectCovers(plan: ChunkSpan[], duration: number) {
  expect(plan[0].start).to.equal(0);
  expect(plan.at(-1)!.end).to.equal(duration);
  for (const [i, c] of plan.entries()) {
    expect(c.end, `chunk ${i}`).to.be.greaterThan(c.start);
    if (i > 0) expect(c.start, `chunk ${i}`).to.equal(plan[i - 1].end);
  }
}

const silenceAt = (mid: number, half = 0.4): Silence => ({ start: mid - half, end: mid + half });

describe('media: chunk plan', () => {
  it('keeps audio no longer than the target plus the window in one chunk', () => {
    expect(planChunks(30, [], 600)).to.deep.equal([{ start: 0, end: 30, atSilence: true }]);
    expect(planChunks(690, [silenceAt(300)], 600)).to.have.length(1);
    expect(planChunks(0, [], 600)).to.deep.equal([]);
  });

  it('cuts at the middle of the silence nearest each boundary, within the window', () => {
    // 1500 s → 3 chunks, ideal boundaries at 500 and 1000; the window is ±90 s.
    const silences = [silenceAt(420), silenceAt(470), silenceAt(560), silenceAt(1085.5, 1)];
    const plan = planChunks(1500, silences, 600);
    expectCovers(plan, 1500);
    expect(plan.map((c) => c.end)).to.deep.equal([470, 1085.5, 1500]);
    expect(plan.every((c) => c.atSilence)).to.equal(true);
  });

  it('cuts at the boundary only when no silence is near, and says so', () => {
    const plan = planChunks(1500, [silenceAt(100), silenceAt(1200)], 600);
    expectCovers(plan, 1500);
    expect(plan.map((c) => [c.end, c.atSilence])).to.deep.equal([
      [500, false],
      [1000, false],
      [1500, true],
    ]);
  });

  it('cuts inside a long silence that spans the window edge, never outside the silence', () => {
    const plan = planChunks(1200, [{ start: 650, end: 900 }], 600);
    expect(plan.map((c) => c.end)).to.deep.equal([690, 1200]);
  });

  it('ignores silence at the start and the end of the audio', () => {
    const plan = planChunks(
      1300,
      [
        { start: 0, end: 5 },
        { start: 1290, end: 1300 },
      ],
      600,
    );
    expectCovers(plan, 1300);
    expect(plan).to.have.length(3);
    expect(plan.map((c) => c.end)).to.deep.equal([433.333, 866.667, 1300]);
  });

  it('makes the fewest chunks of about the target and never caps their number', () => {
    const duration = 12 * 3600 + 17.25; // the contract's 12 h, plus a bit
    const silences = Array.from({ length: 4000 }, (_, i) => silenceAt(5 + i * 10.8, 0.25));
    const plan = planChunks(duration, silences, 300);
    expectCovers(plan, duration);
    expect(plan)
      .to.have.length(Math.ceil(duration / 300))
      .and.to.have.length.above(100);
    expect(plan.every((c) => c.atSilence)).to.equal(true);
    for (const c of plan.slice(0, -1)) {
      expect(silences.some((s) => s.start <= c.end && c.end <= s.end)).to.equal(true);
    }
    for (const c of plan) expect(c.end - c.start).to.be.within(300 * 0.7, 300 * 1.3);
  });

  it('spreads a length just past the window over two chunks rather than leaving a sliver', () => {
    const plan = planChunks(700, [], 600);
    expect(plan.map((c) => c.end)).to.deep.equal([350, 700]);
  });
});

describe('media: silencedetect output', () => {
  it('pairs starts and ends and closes a silence still open at the end', () => {
    const out = [
      'frame:1 pts:100 pts_time:0.1',
      'lavfi.silence_start=-0.02',
      'lavfi.silence_end=0.5',
      'lavfi.silence_duration=0.52',
      'lavfi.silence_start=2.25',
      'lavfi.silence_end=3.75',
      'lavfi.silence_start=9.5',
    ].join('\n');
    expect(parseSilences(out, 10)).to.deep.equal([
      { start: 0, end: 0.5 },
      { start: 2.25, end: 3.75 },
      { start: 9.5, end: 10 },
    ]);
    expect(parseSilences('', 10)).to.deep.equal([]);
  });
});

const appError = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
};

describe('media: frame times', () => {
  const req = (timestamps: unknown, interval?: unknown) => parseFrameRequest(timestamps, interval, 1000);

  it('is the sorted union of timestamps and the interval grid, without times at or past the end', () => {
    expect(frameTimes(req([7, 2.5, 30, 5], 5), 20, 1000)).to.deep.equal([0, 2.5, 5, 7, 10, 15]);
    expect(frameTimes(req(undefined, 0.1), 0.35, 1000)).to.deep.equal([0, 0.1, 0.2, 0.3]);
    expect(frameTimes(req([0.3, 20, 19.999]), 20, 1000)).to.deep.equal([0.3, 19.999]);
    expect(frameTimes(req([], 25), 20, 1000)).to.deep.equal([0]);
  });

  it('reads timestamps from JSON and form fields', () => {
    expect(req('1.5, 3,0').timestamps).to.deep.equal([1.5, 3, 0]);
    expect(req('[2, "4.5"]').timestamps).to.deep.equal([2, 4.5]);
    expect(req(undefined, '2').interval).to.equal(2);
  });

  it('refuses bad requests with VALIDATION_ERROR naming the field', () => {
    const cases: [unknown, unknown, string][] = [
      [undefined, undefined, 'frames'],
      [[1, 'abc'], undefined, 'timestamps'],
      [[1, -2], undefined, 'timestamps'],
      ['[1,', undefined, 'timestamps'],
      [{ a: 1 }, undefined, 'timestamps'],
      [[1], 0, 'interval'],
      [[1], -1, 'interval'],
      [[1], 'often', 'interval'],
    ];
    for (const [t, i, field] of cases) {
      const err = appError(() => req(t, i));
      expect(err.code, JSON.stringify([t, i])).to.equal('VALIDATION_ERROR');
      expect(err.details.field).to.equal(field);
    }
  });

  it('caps the number of frames, before ffmpeg runs and before building a huge grid', () => {
    const few = parseFrameRequest(undefined, 0.001, 10);
    expect(appError(() => frameTimes(few, 43_200, 10)).details).to.include({
      field: 'interval',
      limit: 10,
      requested: 43_200_000,
    });
    expect(appError(() => parseFrameRequest([1, 2, 3], undefined, 2)).details).to.include({
      field: 'timestamps',
      limit: 2,
    });
    expect(appError(() => frameTimes(parseFrameRequest([1.5, 2.5], 1, 3), 3, 3)).details).to.include({
      field: 'frames',
      requested: 5,
    });
  });
});

const probe = (formatNames: string, audio: string | null, extra: Partial<MediaProbe> = {}): MediaProbe => ({
  formatNames: formatNames.split(','),
  brand: null,
  duration: 10,
  audio: audio ? { index: 0, codec: audio, sampleRate: 44100, channels: 2 } : null,
  video: null,
  ...extra,
});
const h264 = { index: 1, codec: 'h264', width: 1280, height: 720, fps: 29.97, duration: 9.5 };

describe('media: formats by content', () => {
  it('maps ffprobe containers and codecs to the spec list', () => {
    const bmff = 'mov,mp4,m4a,3gp,3g2,mj2';
    const cases: [MediaProbe, string | null][] = [
      [probe(bmff, 'aac', { brand: 'M4A' }), 'm4a'],
      [probe(bmff, 'aac', { brand: 'isom', video: h264 }), 'mp4'],
      [probe('ogg', 'vorbis'), 'ogg'],
      [probe('ogg', 'opus'), 'ogg'],
      [probe('ogg', 'flac'), 'oga'],
      [probe('ogg', 'theora_only_codec'), null],
      [probe('matroska,webm', 'opus'), 'webm'],
      [probe('matroska,webm', 'aac'), null],
      [probe('mp3', 'mp3'), 'mp3'],
      [probe('mp3', 'mp2'), 'mpga'],
      [probe('mpeg', 'mp2'), 'mpeg'],
      [probe('mpegts', 'aac'), 'mpeg'],
      [probe('wav', 'pcm_s16le'), 'wav'],
      [probe('flac', 'flac'), 'flac'],
      [probe('png_pipe', null), null],
      [probe('aac', 'aac'), null],
      [probe('', null), null],
    ];
    for (const [p, want] of cases) expect(containerFormatOf(p), p.formatNames.join(',')).to.equal(want);
  });

  it('refuses other formats and files without sound with INVALID_FORMAT and the supported list', () => {
    const unsupported = appError(() => audioFormatOf(probe('png_pipe', null)));
    expect(unsupported.code).to.equal('INVALID_FORMAT');
    expect(unsupported.details).to.deep.include({
      error_type: 'unsupported_format',
      supported_formats: [...SUPPORTED_FORMATS],
    });
    const silent = appError(() => audioFormatOf(probe('mov,mp4,m4a', null, { video: h264 })));
    expect(silent.details).to.deep.include({
      error_type: 'no_audio_stream',
      supported_formats: [...SUPPORTED_FORMATS],
    });
    expect(audioFormatOf(probe('wav', 'pcm_s16le'))).to.equal('wav');
  });

  it('reads ffprobe JSON, skipping cover art as video', () => {
    const p = parseProbe({
      streams: [
        {
          index: 0,
          codec_type: 'video',
          codec_name: 'mjpeg',
          width: 500,
          height: 500,
          disposition: { attached_pic: 1 },
        },
        { index: 1, codec_type: 'audio', codec_name: 'mp3', sample_rate: '44100', channels: 2, avg_frame_rate: '0/0' },
      ],
      format: { format_name: 'mp3', duration: '12.5' },
    });
    expect(p).to.deep.equal({
      formatNames: ['mp3'],
      brand: null,
      duration: 12.5,
      audio: { index: 1, codec: 'mp3', sampleRate: 44100, channels: 2 },
      video: null,
    });
    expect(parseProbe({ streams: [{ codec_type: 'audio', duration: '3.5' }], format: {} }).duration).to.equal(3.5);
    expect(parseProbe({}).duration).to.equal(null);
    expect([parseRate('30000/1001'), parseRate('25/1'), parseRate('0/0'), parseRate(undefined)]).to.deep.equal([
      29.97,
      25,
      null,
      null,
    ]);
  });

  it('gives the video metadata of §4.7', () => {
    expect(videoMetadata(probe('mov,mp4', 'aac', { video: h264 }))).to.deep.equal({
      resolution: '1280x720',
      codec: 'h264',
      fps: 29.97,
      duration: 9.5,
    });
    expect(videoMetadata(probe('mov,mp4', 'aac', { video: { ...h264, duration: null } }))!.duration).to.equal(10);
    expect(videoMetadata(probe('wav', 'pcm_s16le'))).to.equal(null);
  });
});
