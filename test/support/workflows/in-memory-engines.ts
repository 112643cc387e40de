import type { PageLayout } from '../../../domain/pdf/markdown/types';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../../core/errors';
import type { ChunkSpan, ExtractedFrame, MediaCallOptions, MediaEngine, WavInfo } from '../../../domain/engines/media';
import type { MediaProbe } from '../../../core/jobs/media-formats';
import type { OcrCallOptions, OcrEngine, OcrPage } from '../../../domain/engines/ocr';
import type { PdfDescription } from '../../../domain/pdf/description';
import type { PdfCallOptions, PdfEngine, PdfRenderOptions, RenderedPage } from '../../../domain/engines/pdf';
import { PdfError } from '../../../domain/pdf/errors';
import type { SpeechProvider, TranscribeOptions, Transcript } from '../../../domain/engines/speech';

// In-memory engines behind the providers' interfaces (providers/<capability>/engine.ts, speech/types.ts), for unit
// tests of the activities' contracts in MockActivityEnvironment (activity-harness.ts). Their inputs are small JSON
// documents the tests
// write; they read the files the activity hands them (so a wrong blob or scratch copy shows) and write their outputs
// as files, as the real engines do. Each counts its calls, can be slowed down (`delayMs`, honouring the signal as
// the real ones do: an abort rejects with the signal's reason) and told to crash (a plain Error, as a process killed
// by a signal gives).

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason as Error)), { once: true });
  });
}

/** Waits until the signal aborts, then rejects with its reason (an engine that hangs until it is killed). */
const hangUntilAborted = (signal?: AbortSignal) => pause(24 * 3600_000, signal);

/** Something an engine call may be told to do once it started: stall until killed, or crash. */
type Misbehaviour = 'hang' | 'crash' | undefined;

/** A crashed engine process: not an AppError, so the error boundary leaves it to the retry policy. */
export class EngineCrash extends Error {
  constructor(what: string) {
    super(`${what}: engine process killed by SIGSEGV`);
    this.name = 'EngineCrash';
  }
}

// ---------------------------------------------------------------------------------------------------------------- PDF

/** One page of an in-memory PDF: its text layer, and the text a scan of it holds (a page that paints an image). */
export interface FakePage {
  text: string;
  scan?: string;
  /** The OCR confidence of the scan (default 90). */
  confidence?: number;
}

const PDF_MAGIC = '%FAKEPDF\n';

/** The bytes of an in-memory PDF the fake engine reads. */
export function fakePdf(pages: FakePage[], meta: { title?: string; author?: string } = {}): Buffer {
  return Buffer.from(PDF_MAGIC + JSON.stringify({ title: meta.title ?? '', author: meta.author ?? '', pages }));
}

interface FakeDoc {
  title: string;
  author: string;
  pages: FakePage[];
}

export class InMemoryPdfEngine implements PdfEngine {
  readonly calls = {
    describe: 0,
    readPageTexts: [] as number[][],
    pagesWithImages: [] as number[][],
    renderPages: [] as number[],
    renderPagePng: [] as number[],
  };
  /** Milliseconds `describe` takes. */
  describeDelayMs = 0;
  /** What `describe` does once started. */
  describeMisbehaves: Misbehaviour;
  /** Signals the engine was handed, by call. */
  readonly signals: AbortSignal[] = [];

  private async read(pdfPath: string): Promise<FakeDoc> {
    const raw = await fs.readFile(pdfPath, 'utf8');
    if (!raw.startsWith(PDF_MAGIC)) throw new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF');
    try {
      return JSON.parse(raw.slice(PDF_MAGIC.length)) as FakeDoc;
    } catch (cause) {
      throw new PdfError('UNPROCESSABLE_INPUT', 'corrupt', 'The PDF is damaged', { cause });
    }
  }

  private page(doc: FakeDoc, page: number): FakePage {
    const p = doc.pages[page - 1];
    if (!p) throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${page} is not in the document`);
    return p;
  }

  async describe(pdfPath: string, opts: PdfCallOptions = {}): Promise<PdfDescription> {
    this.calls.describe++;
    if (opts.signal) this.signals.push(opts.signal);
    const doc = await this.read(pdfPath);
    if (this.describeMisbehaves === 'crash') throw new EngineCrash('pdfinfo');
    if (this.describeMisbehaves === 'hang') await hangUntilAborted(opts.signal);
    await pause(this.describeDelayMs, opts.signal);
    if (doc.pages.length === 0) throw new PdfError('UNPROCESSABLE_INPUT', 'empty', 'The PDF has no pages');
    return { pageCount: doc.pages.length, title: doc.title, author: doc.author };
  }

  async readPageTexts(pdfPath: string, pages: readonly number[], opts: PdfCallOptions = {}) {
    this.calls.readPageTexts.push([...pages]);
    if (opts.signal) this.signals.push(opts.signal);
    const doc = await this.read(pdfPath);
    return new Map(pages.map((p) => [p, this.page(doc, p).text]));
  }

  /** A page's lines as 10 pt text items, 14 pt apart from the top of an A4 page. */
  async readPageLayouts(pdfPath: string, pages: readonly number[], opts: PdfCallOptions = {}) {
    if (opts.signal) this.signals.push(opts.signal);
    const doc = await this.read(pdfPath);
    const layout = (page: number): PageLayout => ({
      page,
      width: 595,
      height: 842,
      segments: [],
      items: this.page(doc, page)
        .text.split('\n')
        .map((str, i) => ({ str, x: 72, y: 770 - 14 * i, w: str.length * 5, size: 10 })),
    });
    return new Map(pages.map((p) => [p, layout(p)]));
  }

  async pagesWithImages(pdfPath: string, pages: readonly number[], opts: PdfCallOptions = {}) {
    this.calls.pagesWithImages.push([...pages]);
    if (opts.signal) this.signals.push(opts.signal);
    const doc = await this.read(pdfPath);
    return new Set(pages.filter((p) => this.page(doc, p).scan !== undefined));
  }

  async renderPages(
    pdfPath: string,
    pages: number[],
    outDir: string,
    opts: PdfRenderOptions = {},
  ): Promise<RenderedPage[]> {
    if (opts.signal) this.signals.push(opts.signal);
    const doc = await this.read(pdfPath);
    const out: RenderedPage[] = [];
    for (const page of pages) {
      this.calls.renderPages.push(page);
      const p = this.page(doc, page);
      const file = path.join(outDir, `page-${page}.pgm`);
      // The "image": what OCR will find on it (a page without a scan shows its text layer).
      await fs.writeFile(file, JSON.stringify({ page, text: p.scan ?? p.text, confidence: p.confidence ?? 90 }));
      out.push({ page, path: file });
    }
    return out;
  }

  async renderPagePng(pdfPath: string, page: number, outPath: string, _dpi: number, opts: PdfRenderOptions = {}) {
    this.calls.renderPagePng.push(page);
    if (opts.signal) this.signals.push(opts.signal);
    const p = this.page(await this.read(pdfPath), page);
    const file = outPath.endsWith('.png') ? outPath : `${outPath}.png`;
    await fs.writeFile(file, JSON.stringify({ page, text: p.scan ?? p.text }));
    return file;
  }

  async extractEmbeddedImages(pdfPath: string, first: number, last: number, outDir: string) {
    const doc = await this.read(pdfPath);
    await fs.mkdir(outDir, { recursive: true });
    const files: string[] = [];
    for (let page = first; page <= last; page++) {
      if (this.page(doc, page).scan === undefined) continue;
      const file = path.join(outDir, `img-${String(page).padStart(3, '0')}-000.png`);
      await fs.writeFile(file, 'image');
      files.push(file);
    }
    return files;
  }
}

// ---------------------------------------------------------------------------------------------------------------- OCR

const ISO: Record<string, string> = { de: 'deu', en: 'eng', fr: 'fra' };

export class InMemoryOcrEngine implements OcrEngine {
  /** The languages "installed". */
  installed = new Set(['deu', 'eng']);
  /** Pages recognised, in call order. */
  readonly recognized: number[] = [];
  /** Pages whose recognition crashes (the set is read at each call: a test clears it for the next attempt). */
  readonly crashOn = new Set<number>();
  /** Pages whose recognition stalls until the activity's signal aborts. */
  readonly hangOn = new Set<number>();
  /** Milliseconds one recognition takes. */
  delayMs = 0;
  /** Called when a recognition starts (the page), before anything else. */
  onStart?: (page: number) => void;
  readonly signals: AbortSignal[] = [];
  readonly languagesAsked: string[][] = [];

  async languagesFor(requested: string | undefined): Promise<string[]> {
    const parts = requested ? requested.split(/[\s,+]+/).filter(Boolean) : [];
    if (parts.length === 0) return ['deu', 'eng'];
    return parts.map((part) => {
      const code = ISO[part] ?? part;
      if (!this.installed.has(code))
        throw new AppError('UNPROCESSABLE_INPUT', `The OCR language ${part} is not installed.`, {
          reason: 'language_not_installed',
          language: part,
        });
      return code;
    });
  }

  async recognize(imagePath: string, opts: OcrCallOptions): Promise<OcrPage> {
    const img = JSON.parse(await fs.readFile(imagePath, 'utf8')) as { page: number; text: string; confidence: number };
    this.onStart?.(img.page);
    if (opts.signal) this.signals.push(opts.signal);
    this.languagesAsked.push(opts.languages);
    if (this.crashOn.has(img.page)) throw new EngineCrash(`tesseract on page ${img.page}`);
    if (this.hangOn.has(img.page)) await hangUntilAborted(opts.signal);
    await pause(this.delayMs, opts.signal);
    this.recognized.push(img.page);
    return { text: img.text, confidence: img.confidence, words: img.text.split(/\s+/).length, rotation: 0 };
  }
}

// -------------------------------------------------------------------------------------------------------------- media

/** A recording the fake media engine reads: its container, length and whether it has sound. */
export interface FakeRecording {
  format: string;
  duration: number;
  audio?: boolean;
  /** Decodes to no sound at all (`UNPROCESSABLE_INPUT`, as ffmpeg's empty output is). */
  silent?: boolean;
}

export const fakeRecording = (r: FakeRecording): Buffer => Buffer.from(JSON.stringify(r));

const wavInfo = (duration: number): WavInfo => ({
  sampleRate: 16_000,
  channels: 1,
  bitsPerSample: 16,
  dataOffset: 44,
  samples: Math.round(duration * 16_000),
  duration,
});

export class InMemoryMediaEngine implements MediaEngine {
  readonly calls = { probe: 0, decodeToWav: 0, planChunks: 0, cutChunk: [] as [number, number][] };
  /** Milliseconds a decode takes. */
  decodeDelayMs = 0;
  /** What a decode does once started (read at each call). */
  decodeMisbehaves: Misbehaviour;
  readonly signals: AbortSignal[] = [];

  async probe(filePath: string, opts: MediaCallOptions = {}): Promise<MediaProbe> {
    this.calls.probe++;
    if (opts.signal) this.signals.push(opts.signal);
    let r: FakeRecording;
    try {
      r = JSON.parse(await fs.readFile(filePath, 'utf8')) as FakeRecording;
    } catch {
      throw new AppError('INVALID_FORMAT', 'No demuxer reads the file', { error_type: 'unsupported_format' });
    }
    return {
      formatNames: [r.format],
      brand: null,
      duration: r.duration,
      audio: r.audio === false ? null : { index: 0, codec: 'pcm_s16le', sampleRate: 44_100, channels: 2 },
      video: null,
    };
  }

  async decodeToWav(inputPath: string, outPath: string, opts: MediaCallOptions & { maxSeconds?: number } = {}) {
    this.calls.decodeToWav++;
    if (opts.signal) this.signals.push(opts.signal);
    const r = JSON.parse(await fs.readFile(inputPath, 'utf8')) as FakeRecording;
    if (this.decodeMisbehaves === 'crash') throw new EngineCrash('ffmpeg decoding');
    if (this.decodeMisbehaves === 'hang') await hangUntilAborted(opts.signal);
    await pause(this.decodeDelayMs, opts.signal);
    if (r.silent)
      throw new AppError('UNPROCESSABLE_INPUT', 'The audio stream holds no decodable sound', {
        error_type: 'empty_audio',
      });
    await fs.writeFile(outPath, JSON.stringify({ wav: true, duration: r.duration }));
    return wavInfo(r.duration);
  }

  async planChunks(_wavPath: string, duration: number, targetSec: number): Promise<ChunkSpan[]> {
    this.calls.planChunks++;
    const spans: ChunkSpan[] = [];
    for (let start = 0; start < duration; start += targetSec)
      spans.push({ start, end: Math.min(duration, start + targetSec), atSilence: true });
    return spans;
  }

  async cutChunk(wavPath: string, start: number, end: number, outPath: string, opts: MediaCallOptions = {}) {
    this.calls.cutChunk.push([start, end]);
    if (opts.signal) this.signals.push(opts.signal);
    const wav = JSON.parse(await fs.readFile(wavPath, 'utf8')) as { wav: boolean };
    if (!wav.wav) throw new Error('not the prepared WAV');
    await fs.writeFile(outPath, JSON.stringify({ start, end }));
    return wavInfo(end - start);
  }

  async extractFrames(_videoPath: string, times: readonly number[], outDir: string): Promise<ExtractedFrame[]> {
    return Promise.all(
      times.map(async (time, i) => {
        const file = path.join(outDir, `frame-${String(i + 1).padStart(5, '0')}.jpg`);
        await fs.writeFile(file, 'jpeg');
        return { time, path: file };
      }),
    );
  }
}

// ------------------------------------------------------------------------------------------------------------- speech

export class InMemorySpeechEngine implements SpeechProvider {
  /** Chunks transcribed (their start second), in call order. */
  readonly transcribed: number[] = [];
  /** The language each call was given. */
  readonly languages: (string | undefined)[] = [];
  readonly signals: AbortSignal[] = [];
  delayMs = 0;
  /** What the next calls do once started: stall until killed, crash, or fail as a provider does (an AppError). */
  misbehaves: Misbehaviour | AppError;

  async transcribe(audioPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const chunk = JSON.parse(await fs.readFile(audioPath, 'utf8')) as { start: number; end: number };
    if (opts.signal) this.signals.push(opts.signal);
    this.languages.push(opts.language);
    if (this.misbehaves instanceof AppError) throw this.misbehaves;
    if (this.misbehaves === 'crash') throw new EngineCrash('speech engine');
    if (this.misbehaves === 'hang') await hangUntilAborted(opts.signal);
    await pause(this.delayMs, opts.signal);
    this.transcribed.push(chunk.start);
    const text = `words from ${chunk.start} to ${chunk.end}`;
    return {
      language: opts.language ?? 'de',
      duration: chunk.end - chunk.start,
      text,
      segments: [{ start: 0, end: chunk.end - chunk.start, text }],
      model: 'in-memory-whisper',
      durationMs: 5,
    };
  }

  async detectLanguage(audioPath: string) {
    const chunk = JSON.parse(await fs.readFile(audioPath, 'utf8')) as { start: number; end: number };
    return { language: 'de', probability: 1, duration: chunk.end - chunk.start, model: 'in-memory-whisper' };
  }

  describe() {
    return { provider: 'local' as const, model: 'in-memory-whisper' };
  }

  async close() {}
}
