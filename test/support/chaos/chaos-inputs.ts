/**
 * Inputs for the chaos tests, each with what its job must answer: native PDFs and scans with a marker of their own,
 * page images for OCR, recordings of several chunks whose words differ from recording to recording, and texts for
 * the model-backed transformer operations (their answers come from the LLM double: llm-double.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { joinWithPauses, spoken, writeWav } from '../media/media-factory';
import { scannedPdf } from '../documents/pdf-factory';
import { pageImage, textPdf } from '../results';
import { RECORDING_SENTENCES } from '../media/speech-recording';

export interface PdfInput {
  file: string;
  /** Text the job's extracted text must contain. */
  marker: string;
}

/** `n` one-page PDFs with a text layer, each with its own marker line. */
export function nativePdfs(dir: string, n: number): PdfInput[] {
  fs.mkdirSync(dir, { recursive: true });
  return Array.from({ length: n }, (_, i) => {
    const marker = `Chaos native ${i} marker ${i * 7919 + 13}`;
    const file = path.join(dir, `native-${i}.pdf`);
    fs.writeFileSync(file, textPdf([marker, 'A light page with a text layer.']));
    return { file, marker };
  });
}

/** `n` scans (no text layer) of `pages` pages each; every page carries the scan's reference number. */
export async function scannedPdfs(dir: string, n: number, pages = 2): Promise<PdfInput[]> {
  fs.mkdirSync(dir, { recursive: true });
  const out: PdfInput[] = [];
  for (let i = 0; i < n; i++) {
    const marker = `reference ${1000 + i * 37}`;
    const file = path.join(dir, `scan-${i}.pdf`);
    const texts = Array.from(
      { length: pages },
      (_, p) => `Scanned letter ${i}, page ${p + 1}, ${marker}. The meeting is moved to the large hall on Friday.`,
    );
    fs.writeFileSync(file, await scannedPdf(texts, 200));
    out.push({ file, marker });
  }
  return out;
}

export interface ImageInput {
  bytes: Buffer;
  marker: string;
}

/** `n` PNG page renders (150 dpi), each with its own reference number. */
export function pageImages(n: number, first = 0): ImageInput[] {
  return Array.from({ length: n }, (_, k) => {
    const i = first + k;
    const marker = `reference ${2000 + i * 41}`;
    return { bytes: pageImage([`Image upload ${i}, ${marker}.`, 'The text of this page is read by OCR.']), marker };
  });
}

/** One word of each recording sentence that a transcript must hold (`RECORDING_SENTENCES`, same order). */
const SENTENCE_WORDS = [
  'berlin',
  'passport',
  'coffee',
  'journey',
  'station',
  'park',
  'bridge',
  'library',
  'shop',
  'radio',
];
/** Recording k opens with a sentence naming its own city: a transcript holding another recording's city is swapped. */
const CITIES = ['paris', 'london', 'madrid', 'rome', 'oslo', 'lisbon'];

export interface RecordingInput {
  file: string;
  /** Words (lower case) its transcript must contain. */
  words: string[];
  /** Words its transcript must not contain (the other recordings' cities). */
  foreign: string[];
}

/**
 * `n` recordings of about 30 s (several chunks at AUDIO_CHUNK_SECONDS=10): a sentence naming the recording's own
 * city, then five of the recording sentences (a different run for each), spoken by espeak-ng with 1 s pauses.
 */
export async function recordings(dir: string, n: number): Promise<RecordingInput[]> {
  if (n > CITIES.length) throw new Error(`at most ${CITIES.length} recordings`);
  fs.mkdirSync(dir, { recursive: true });
  const voice = new Map<string, Int16Array>();
  const say = async (s: string) => {
    if (!voice.has(s)) voice.set(s, await spoken(s, dir));
    return voice.get(s)!;
  };
  const out: RecordingInput[] = [];
  for (let k = 0; k < n; k++) {
    const city = CITIES[k];
    const picks = Array.from({ length: 5 }, (_, j) => (k * 2 + j) % RECORDING_SENTENCES.length);
    const runs = [await say(`This recording is about the city of ${city[0].toUpperCase()}${city.slice(1)}.`)];
    for (const p of picks) runs.push(await say(RECORDING_SENTENCES[p]));
    const file = path.join(dir, `recording-${k}.wav`);
    await writeWav(file, joinWithPauses(runs, () => 1).samples);
    out.push({
      file,
      words: [city, ...picks.map((p) => SENTENCE_WORDS[p])],
      foreign: CITIES.slice(0, n).filter((c) => c !== city),
    });
  }
  return out;
}

/** Lower-case words of a transcript, punctuation removed. */
export const wordsOf = (text: string): Set<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-zäöüß]+/)
      .filter(Boolean),
  );

/** A translation job's text: German, with its marker. */
export const translationText = (i: number): string =>
  `Notiz CHAOS-T${i}: Der Zug nach Köln fährt heute um ${8 + (i % 10)} Uhr vom Gleis ${i + 1} ab.`;

/** A template job's text and template. */
export const templateText = (i: number): string =>
  `Memo CHAOS-M${i}: the board met on Monday and agreed to open the new library branch in spring.`;
export const TEMPLATE_CONTENT = '# {{title|A short title}}\n\n{{gist|The text in one sentence}}';
