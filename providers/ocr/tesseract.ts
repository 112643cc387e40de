/**
 * OCR through the tesseract CLI: one process per image, `OMP_THREAD_LIMIT=1` (OpenMP made a page five times
 * slower on two cores), pages in parallel through `mapPool` (core/runtime/pool.ts) with one slot per worker core. One run
 * yields text
 * and confidence: the TSV output is parsed and the text rebuilt from its block, paragraph and line numbers.
 */
import { rm } from 'node:fs/promises';
import { toolEnvironment } from '../../core/config/config';
import { AppError } from '../../core/errors';
import type { OcrResult } from '../../domain/engines/ocr';
import { parseTsvLayout } from '../../domain/pdf/markdown/ocr-layout';
import { ToolExitError, ToolTimeoutError, runTool } from '../process/run-tool';
import { IMAGE_DEMUXERS, localInput } from '../media/input-guard';

export interface OcrOptions {
  /** Tesseract language codes (`deu`, `eng`); missing or not installed ones fall back to `DEFAULT_LANGUAGES`. */
  languages: string[];
  signal?: AbortSignal;
  /** Page segmentation mode (default 3: fully automatic, no orientation detection). */
  psm?: number;
  /** Resolution of the image (default 300); PGM files carry none and tesseract would guess 70. */
  dpi?: number;
  /** Default 120 000 ms per image. */
  timeoutMs?: number;
  /** Called with the process id once tesseract runs. */
  onSpawn?: (pid: number) => void;
}

/** Languages used when none (or none usable) are asked for. */
export const DEFAULT_LANGUAGES: readonly string[] = ['deu', 'eng'];

const ISO_TO_TESSERACT: ReadonlyMap<string, string> = new Map(
  Object.entries({
    ar: 'ara',
    bg: 'bul',
    ca: 'cat',
    cs: 'ces',
    cy: 'cym',
    da: 'dan',
    de: 'deu',
    el: 'ell',
    en: 'eng',
    es: 'spa',
    et: 'est',
    eu: 'eus',
    fa: 'fas',
    fi: 'fin',
    fr: 'fra',
    ga: 'gle',
    gl: 'glg',
    he: 'heb',
    hi: 'hin',
    hr: 'hrv',
    hu: 'hun',
    id: 'ind',
    is: 'isl',
    it: 'ita',
    ja: 'jpn',
    ko: 'kor',
    la: 'lat',
    lt: 'lit',
    lv: 'lav',
    mt: 'mlt',
    nb: 'nor',
    nl: 'nld',
    nn: 'nor',
    no: 'nor',
    pl: 'pol',
    pt: 'por',
    ro: 'ron',
    ru: 'rus',
    sk: 'slk',
    sl: 'slv',
    sq: 'sqi',
    sr: 'srp',
    sv: 'swe',
    th: 'tha',
    tr: 'tur',
    uk: 'ukr',
    vi: 'vie',
    zh: 'chi_sim',
  }),
);
const TESSERACT_CODES = new Set([...ISO_TO_TESSERACT.values(), 'chi_tra']);

/**
 * Maps ISO 639-1 codes (`de`, `en-US`, a list, or one string with `,` `+` or spaces) to tesseract codes; tesseract
 * codes pass as they are. Unknown codes, and codes not in `installed` when given, are dropped; if nothing is
 * left the result is `DEFAULT_LANGUAGES`. Order is kept, duplicates removed. Pure.
 */
export function toTesseractLanguages(iso: string[] | string | undefined, installed?: ReadonlySet<string>): string[] {
  const raw = iso === undefined ? [] : Array.isArray(iso) ? iso : [iso];
  const out: string[] = [];
  for (const part of raw.flatMap((s) => s.split(/[\s,+]+/))) {
    const code = toTesseractCode(part, installed);
    if (code && (!installed || installed.has(code)) && !out.includes(code)) out.push(code);
  }
  return out.length > 0 ? out : [...DEFAULT_LANGUAGES];
}

function toTesseractCode(part: string, installed: ReadonlySet<string> | undefined): string | undefined {
  const lower = part.trim().toLowerCase();
  if (!lower) return undefined;
  if (installed?.has(lower) || TESSERACT_CODES.has(lower)) return lower;
  if (lower === 'zh-tw' || lower === 'zh-hant') return 'chi_tra';
  return ISO_TO_TESSERACT.get(lower.split(/[-_]/)[0]);
}

let installedCache: Promise<ReadonlySet<string>> | undefined;

/** Languages tesseract has data for (without `osd`), asked once per process. */
export function installedLanguages(): Promise<ReadonlySet<string>> {
  installedCache ??= runTool('tesseract', ['--list-langs'], { timeoutMs: 10_000 })
    .then(({ stdout, stderr }) => {
      // Tesseract 4 printed the list on stderr, 5 prints it on stdout.
      const lines = `${stdout.toString('utf8')}\n${stderr}`.split('\n').map((l) => l.trim());
      return new Set(lines.filter((l) => /^[A-Za-z_]+$/.test(l) && l !== 'osd'));
    })
    .catch((err: unknown) => {
      installedCache = undefined;
      throw err;
    });
  return installedCache;
}

/**
 * The tesseract languages for a request's `ocr_language` (ISO 639-1 or tesseract codes, `de+en`, `de,en`): every
 * one asked must be installed, else 422 `UNPROCESSABLE_INPUT` with `details.reason: language_not_installed`, the code
 * asked and the installed ones (contract §9), never a quiet fallback. Nothing asked: `DEFAULT_LANGUAGES`.
 */
export async function ocrLanguagesFor(requested: string | undefined): Promise<string[]> {
  const parts = requested ? requested.split(/[\s,+]+/).filter(Boolean) : [];
  if (parts.length === 0) return [...DEFAULT_LANGUAGES];
  const installed = await installedLanguages();
  const out: string[] = [];
  for (const part of parts) {
    const code = toTesseractCode(part, installed);
    if (!code || !installed.has(code)) {
      const list = [...installed].sort();
      throw new AppError(
        'UNPROCESSABLE_INPUT',
        `The OCR language ${part} is not installed; installed: ${list.join(', ')}.`,
        {
          reason: 'language_not_installed',
          language: part,
          ...(code ? { tesseract_code: code } : {}),
          installed: list,
        },
      );
    }
    if (!out.includes(code)) out.push(code);
  }
  return out;
}

interface TsvWord {
  block: number;
  par: number;
  line: number;
  conf: number;
  text: string;
}

/**
 * Parses tesseract's TSV output into text and word statistics. Words of one line are joined with spaces, lines
 * with a newline, paragraphs and blocks with a blank line, as tesseract's own text output does. Pure.
 */
export function parseTesseractTsv(tsv: string): OcrResult {
  const words: TsvWord[] = [];
  for (const row of tsv.split('\n')) {
    const cols = row.split('\t');
    if (cols.length < 12 || cols[0] !== '5') continue;
    const text = cols.slice(11).join('\t').trim();
    const conf = Number(cols[10]);
    if (!text || !(conf >= 0)) continue;
    words.push({ block: Number(cols[2]), par: Number(cols[3]), line: Number(cols[4]), conf, text });
  }
  let text = '';
  let prev: TsvWord | undefined;
  for (const w of words) {
    if (prev) {
      if (w.block !== prev.block || w.par !== prev.par) text += '\n\n';
      else if (w.line !== prev.line) text += '\n';
      else text += ' ';
    }
    text += w.text;
    prev = w;
  }
  const confidence = words.length > 0 ? words.reduce((s, w) => s + w.conf, 0) / words.length : 0;
  return { text, confidence: Math.round(confidence * 100) / 100, words: words.length };
}

/**
 * Tesseract's failures on an input as 422 `UNPROCESSABLE_INPUT`: an image it cannot decode (a header that lies, a
 * truncated file) makes it exit with an error, and one that outlives the limit would do so again; retrying either
 * only repeats the cost. A process killed by a signal (memory pressure, a shutdown) stays retryable.
 */
export function tesseractError(err: unknown): unknown {
  if (err instanceof ToolTimeoutError) {
    return new AppError('UNPROCESSABLE_INPUT', `Text recognition did not finish within ${err.timeoutMs} ms.`, {
      reason: 'ocr_timeout',
      timeout_ms: err.timeoutMs,
    });
  }
  if (err instanceof ToolExitError && err.exitCode !== null) {
    const line = err.stderr
      .split('\n')
      .find((l) => /error|cannot|can't|unsupported|read/i.test(l))
      ?.trim()
      .slice(0, 200);
    return new AppError('UNPROCESSABLE_INPUT', 'The image could not be decoded for text recognition.', {
      reason: 'undecodable_image',
      ...(line ? { engine_message: line } : {}),
    });
  }
  return err;
}

/**
 * Recognises the text of one image. The process runs single-threaded, is killed on abort (rejecting with the
 * signal's reason) and on timeout; the input's failures are `tesseractError`s.
 */
export async function ocrImage(imagePath: string, opts: OcrOptions): Promise<OcrResult> {
  opts.signal?.throwIfAborted();
  const languages = toTesseractLanguages(opts.languages, await installedLanguages());
  const args = [
    imagePath,
    'stdout',
    '-l',
    languages.join('+'),
    '--psm',
    String(opts.psm ?? 3),
    '--dpi',
    String(opts.dpi ?? 300),
    'tsv',
  ];
  try {
    const { stdout } = await runTool('tesseract', args, {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 120_000,
      env: toolEnvironment({ OMP_THREAD_LIMIT: '1' }),
      onSpawn: opts.onSpawn,
    });
    const tsv = stdout.toString('utf8');
    return { ...parseTesseractTsv(tsv), layout: parseTsvLayout(tsv) };
  } catch (err) {
    throw tesseractError(err);
  }
}

/** Below this mean word confidence (or with fewer than 3 words) a page may lie on its side or upside down. */
const LOW_CONFIDENCE = 60;

/**
 * What tesseract's orientation detection (`--psm 0`, the `osd` data) says: turn the image `rotate` degrees clockwise.
 */
export interface Orientation {
  rotate: 0 | 90 | 180 | 270;
  confidence: number;
}

/** The page's orientation, or null when tesseract cannot tell (too few characters, no `osd` data). */
export async function detectOrientation(
  imagePath: string,
  opts: { signal?: AbortSignal; dpi?: number } = {},
): Promise<Orientation | null> {
  try {
    const { stdout } = await runTool(
      'tesseract',
      [imagePath, 'stdout', '--psm', '0', '--dpi', String(opts.dpi ?? 300)],
      {
        signal: opts.signal,
        timeoutMs: 60_000,
        env: toolEnvironment({ OMP_THREAD_LIMIT: '1' }),
      },
    );
    const out = stdout.toString('utf8');
    const rotate = Number(/Rotate:\s*(\d+)/.exec(out)?.[1]);
    const confidence = Number(/Orientation confidence:\s*([\d.]+)/.exec(out)?.[1] ?? 0);
    return rotate === 0 || rotate === 90 || rotate === 180 || rotate === 270 ? { rotate, confidence } : null;
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return null;
  }
}

/** ffmpeg's filter that turns an image `rotate` degrees clockwise. */
const ROTATE_FILTER: Record<90 | 180 | 270, string> = { 90: 'transpose=1', 180: 'hflip,vflip', 270: 'transpose=2' };

/**
 * OCR that turns a page scanned upside down or sideways before reading it: a page read with low confidence is asked
 * for its orientation (tesseract's OSD); when it needs turning, the turned image is read again and kept if it reads
 * better. Pages that read well pay nothing extra. `rotation`: the degrees (clockwise) the page was turned, 0 if not.
 */
export async function ocrOriented(imagePath: string, opts: OcrOptions): Promise<OcrResult & { rotation: number }> {
  const first = await ocrImage(imagePath, opts);
  if (first.confidence >= LOW_CONFIDENCE && first.words >= 3) return { ...first, rotation: 0 };
  const o = await detectOrientation(imagePath, opts);
  if (!o || o.rotate === 0) return { ...first, rotation: 0 };
  const turned = `${imagePath}.rotated-${o.rotate}.png`;
  try {
    await runTool(
      'ffmpeg',
      ['-loglevel', 'error', '-y', ...localInput(imagePath, IMAGE_DEMUXERS), '-vf', ROTATE_FILTER[o.rotate], turned],
      {
        signal: opts.signal,
        timeoutMs: 60_000,
      },
    );
    const again = await ocrImage(turned, opts);
    return again.confidence > first.confidence ? { ...again, rotation: o.rotate } : { ...first, rotation: 0 };
  } finally {
    await rm(turned, { force: true });
  }
}
