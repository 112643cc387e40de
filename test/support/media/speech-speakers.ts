/**
 * Recordings with known speakers for the diarization tests and benchmark: sentences spoken in turn by different
 * voices (espeak-ng variants; or human prompt recordings in the bench), joined with pauses, with who spoke when. And
 * the diarization error rate of an answer against them.
 */
import path from 'node:path';
import { joinWithPauses, pcmBytes, RATE, writeWav } from './media-factory';
import { speak } from './speech-samples';

/** One stretch of the recording and who speaks it (the voice's index in the generator's list). */
export interface Turn {
  start: number;
  end: number;
  speaker: number;
}

/** A conversation: two people talking about a trip, one sentence per turn. */
export const DIALOGUE = [
  'Good morning, did you book the train tickets for our trip to the mountains?',
  'Yes, I booked them last night, the train leaves at nine in the morning.',
  'That is a little early, but we will have the whole afternoon for a walk.',
  'I also reserved a table at the small restaurant near the lake.',
  'Wonderful, I have heard that they serve very good fish there.',
  'We should pack warm clothes, the weather report says it will be cold.',
  'Then I will bring my old jacket and the thick blue scarf.',
  'Do not forget the camera, the view from the top is supposed to be beautiful.',
];

/**
 * `<dir>/<name>.wav`: `lines` spoken in turn by `voices` (espeak-ng voice names: line i by voice i mod n), joined with
 * `pause` seconds of silence; with the turns as spoken.
 */
export async function dialogueRecording(
  dir: string,
  name: string,
  voices: string[],
  lines: string[] = DIALOGUE,
  pause = 0.8,
): Promise<{ file: string; turns: Turn[]; seconds: number }> {
  const runs: Int16Array[] = [];
  for (const [i, line] of lines.entries()) {
    const pcm = await pcmBytes(await speak(line, voices[i % voices.length], dir, `${name}-${i}`));
    runs.push(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
  }
  const joined = joinWithPauses(runs, () => pause);
  const file = path.join(dir, `${name}.wav`);
  await writeWav(file, joined.samples);
  const turns = joined.spans.map(([start, end], i) => ({ start, end, speaker: i % voices.length }));
  return { file, turns, seconds: joined.samples.length / RATE };
}

/** What an answer says of who speaks when: its words' speakers (or its segments' when it has no words). */
export function labelledSpans(
  segments: {
    start: number;
    end: number;
    speaker?: string;
    words?: { start: number; end: number; speaker?: string }[];
  }[],
): { start: number; end: number; label: string }[] {
  return segments.flatMap((s) =>
    s.words?.length
      ? s.words.map((w) => ({ start: w.start, end: w.end, label: w.speaker ?? '' }))
      : [{ start: s.start, end: s.end, label: s.speaker ?? '' }],
  );
}

/**
 * The diarization error rate as the brief measures it: the share of the reference speech time (10 ms frames inside
 * the turns) that the answer labels with the wrong speaker after the best one-to-one mapping of its labels onto the
 * reference speakers (`confusion`), plus the share it leaves unlabelled (`missed`: speech the transcript does not
 * cover). Labels beyond the reference speakers map to nobody (wrong wherever they appear).
 */
export function diarizationErrorRate(
  turns: Turn[],
  hyp: { start: number; end: number; label: string }[],
): { der: number; confusion: number; missed: number } {
  const step = 0.01;
  const frames: { ref: number; hyp: string }[] = [];
  const sorted = [...hyp].sort((a, b) => a.start - b.start);
  for (const t of turns) {
    for (let x = t.start + step / 2; x < t.end; x += step) {
      // The label of the hypothesis span holding this instant, or of the nearest one within 0.3 s (word timings leave
      // gaps between words that are still the same person's turn).
      let label = '';
      let dist = 0.3;
      for (const h of sorted) {
        const d = x < h.start ? h.start - x : x > h.end ? x - h.end : 0;
        if (d <= dist) [label, dist] = [h.label, d];
        if (h.start > x + 0.3) break;
      }
      frames.push({ ref: t.speaker, hyp: label });
    }
  }
  if (!frames.length) return { der: 0, confusion: 0, missed: 0 };
  const labels = [...new Set(frames.map((f) => f.hyp).filter(Boolean))];
  const speakers = [...new Set(turns.map((t) => t.speaker))];
  let bestCorrect = 0;
  // Best mapping: every assignment of reference speakers to distinct labels (few speakers: brute force).
  const assign = (i: number, used: Set<string>, map: Map<number, string>) => {
    if (i === speakers.length) {
      const correct = frames.filter((f) => f.hyp && map.get(f.ref) === f.hyp).length;
      bestCorrect = Math.max(bestCorrect, correct);
      return;
    }
    for (const l of [...labels, '']) {
      if (l && used.has(l)) continue;
      map.set(speakers[i], l);
      if (l) used.add(l);
      assign(i + 1, used, map);
      if (l) used.delete(l);
    }
  };
  assign(0, new Set(), new Map());
  const missed = frames.filter((f) => !f.hyp).length / frames.length;
  const der = 1 - bestCorrect / frames.length;
  return { der, confusion: Math.max(0, der - missed), missed };
}
