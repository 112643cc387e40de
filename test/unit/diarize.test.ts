import { expect } from 'chai';
import { clusterEmbeddings, diarize, type SpeakerWindow } from '../../core/results/diarize';
import type { AudioSegment } from '../../core/results/result-shapes';

// Speaker labels from speaker embeddings (core/results/diarize.ts) on synthetic voices: each voice a direction in 256
// dimensions, each window that direction plus noise (seeded), so the answers are known.

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const gauss = (r: () => number) => Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
const normed = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

/** Voices whose directions are `similarity` apart (cosine), as GE2E puts different speakers (0.5-0.75). */
function voices(n: number, seed: number, similarity = 0.6): number[][] {
  const r = rng(seed);
  const common = normed(Array.from({ length: 256 }, () => gauss(r)));
  return Array.from({ length: n }, () => {
    const own = normed(Array.from({ length: 256 }, () => gauss(r)));
    return normed(common.map((c, i) => Math.sqrt(similarity) * c + Math.sqrt(1 - similarity) * own[i]));
  });
}

/** A window of `voice` with noise (windows of one voice lie about 0.85 of each other). */
const windowOf = (voice: number[], r: () => number, start: number, end: number): SpeakerWindow => ({
  start,
  end,
  embedding: normed(voice.map((x) => x + 0.025 * gauss(r))),
});

/** Segments of 3 s, one per turn, with 3 words each; windows every 0.8 s over each. */
function conversation(who: number[], vs: number[][], seed: number) {
  const r = rng(seed);
  const segments: AudioSegment[] = [];
  const windows: SpeakerWindow[] = [];
  who.forEach((speaker, i) => {
    const start = i * 4;
    segments.push({
      id: i,
      start,
      end: start + 3,
      text: 'one two three',
      words: [0, 1, 2].map((k) => ({ word: ` w${k}`, start: start + k, end: start + k + 0.9, probability: 0.9 })),
    });
    for (let t = start; t + 1.6 <= start + 3 + 1e-9; t += 0.8) windows.push(windowOf(vs[speaker], r, t, t + 1.6));
  });
  return { segments, windows };
}

describe('diarize: speaker labels from speaker embeddings', () => {
  it('two voices taking turns get two labels, in order of first speech, on segments and words', () => {
    const who = [0, 1, 0, 1, 1, 0, 1, 0];
    const { segments, windows } = conversation(who, voices(2, 1), 2);
    const out = diarize(segments, windows);
    expect(out.map((s) => s.speaker)).to.deep.equal(who.map((w) => `SPEAKER_${w + 1}`));
    for (const s of out) for (const w of s.words!) expect(w.speaker).to.equal(s.speaker);
    // The text and timings are kept.
    expect(out.map(({ speaker: _, words: __, ...s }) => s)).to.deep.equal(segments.map(({ words: _, ...s }) => s));
  });

  it('the second voice speaking first is SPEAKER_1', () => {
    const { segments, windows } = conversation([1, 0, 1, 0], voices(2, 3), 4);
    expect(diarize(segments, windows).map((s) => s.speaker)).to.deep.equal([1, 2, 1, 2].map((n) => `SPEAKER_${n}`));
  });

  it('one voice is one speaker', () => {
    const { segments, windows } = conversation([0, 0, 0, 0, 0, 0], voices(1, 5), 6);
    expect(new Set(diarize(segments, windows).map((s) => s.speaker))).to.deep.equal(new Set(['SPEAKER_1']));
  });

  it('three voices are three speakers; max_speakers=2 merges the closest two', () => {
    const who = [0, 1, 2, 0, 1, 2, 0, 1, 2];
    const { segments, windows } = conversation(who, voices(3, 7), 8);
    expect(diarize(segments, windows).map((s) => s.speaker)).to.deep.equal(who.map((w) => `SPEAKER_${w + 1}`));
    const two = diarize(segments, windows, { maxSpeakers: 2 });
    expect(new Set(two.map((s) => s.speaker)).size).to.equal(2);
    // Merging keeps each voice whole: every turn of a voice has one label.
    for (const v of [0, 1, 2])
      expect(new Set(two.filter((_, i) => who[i] === v).map((s) => s.speaker)).size).to.equal(1);
  });

  it('a turn inside one segment shows on its words; the segment is who speaks most of it', () => {
    const vs = voices(2, 9);
    const r = rng(10);
    const { segments, windows } = conversation([0, 1, 0, 1], vs, 11);
    // A 6 s segment: voice 0 for 4 s, then voice 1 for 2 s, with words each second.
    const seg: AudioSegment = {
      id: 4,
      start: 16,
      end: 22,
      text: 'a b c d e f',
      words: [0, 1, 2, 3, 4, 5].map((k) => ({ word: ` x${k}`, start: 16 + k, end: 16.9 + k, probability: 0.9 })),
    };
    const extra = [16, 16.8, 17.6, 18.4].map((t) => windowOf(vs[0], r, t, t + 1.6));
    extra.push(windowOf(vs[1], r, 20.0, 21.6), windowOf(vs[1], r, 20.4, 22));
    const out = diarize([...segments, seg], [...windows, ...extra]);
    const last = out.at(-1)!;
    expect(last.speaker).to.equal('SPEAKER_1');
    expect(last.words!.map((w) => w.speaker)).to.deep.equal([1, 1, 1, 1, 2, 2].map((n) => `SPEAKER_${n}`));
  });

  it('a single stray window of another voice inside a segment is not a turn', () => {
    const vs = voices(2, 12);
    const r = rng(13);
    const { segments, windows } = conversation([0, 1], vs, 14);
    const seg: AudioSegment = {
      id: 2,
      start: 8,
      end: 12,
      text: 'a b c d',
      words: [0, 1, 2, 3].map((k) => ({ word: ` x${k}`, start: 8 + k, end: 8.9 + k, probability: 0.9 })),
    };
    const extra = [windowOf(vs[0], r, 8, 9.6), windowOf(vs[1], r, 8.8, 10.4), windowOf(vs[0], r, 9.6, 11.2)];
    extra.push(windowOf(vs[0], r, 10.4, 12));
    const last = diarize([...segments, seg], [...windows, ...extra]).at(-1)!;
    expect(last.words!.map((w) => w.speaker)).to.deep.equal(['SPEAKER_1', 'SPEAKER_1', 'SPEAKER_1', 'SPEAKER_1']);
  });

  it('a segment without windows (too short to embed) takes the speaker before it; segments without words keep none', () => {
    const { segments, windows } = conversation([0, 1], voices(2, 15), 16);
    const short: AudioSegment = { id: 2, start: 8, end: 8.2, text: 'ok' };
    const out = diarize([...segments, short], windows);
    expect(out.map((s) => s.speaker)).to.deep.equal(['SPEAKER_1', 'SPEAKER_2', 'SPEAKER_2']);
    expect(out[2]).to.not.have.property('words');
  });

  it('pieces that hold both voices (turns inside segments) do not chain the two voices into one', () => {
    // Voices as close as a man's and a woman's telephone voice (0.68), chained by pieces whose means lie between them.
    const vs = voices(2, 19, 0.68);
    const r = rng(20);
    const { segments, windows } = conversation([0, 1, 0, 1, 0, 1], vs, 21);
    // Two more segments, each a turn from one voice to the other in 2.4 s.
    const mixed: AudioSegment[] = [];
    const extra: SpeakerWindow[] = [];
    for (let k = 0; k < 2; k++) {
      const start = 24 + k * 4;
      mixed.push({ id: 6 + k, start, end: start + 2.4, text: 'a b' });
      extra.push(windowOf(vs[0], r, start, start + 1.6), windowOf(vs[1], r, start + 0.8, start + 2.4));
    }
    const out = diarize([...segments, ...mixed], [...windows, ...extra]);
    expect(out.slice(0, 6).map((s) => s.speaker)).to.deep.equal([1, 2, 1, 2, 1, 2].map((n) => `SPEAKER_${n}`));
  });

  it('a recording of more pieces than are clustered (2,400 turns) still labels every turn', () => {
    const who = Array.from({ length: 2400 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const { segments, windows } = conversation(who, voices(2, 22), 23);
    const out = diarize(segments, windows);
    expect(out.map((s) => s.speaker)).to.deep.equal(who.map((w) => `SPEAKER_${w === 1 ? 1 : 2}`));
  });

  it('a voice heard in fewer than 3 windows (a cough, a word) is no speaker of its own', () => {
    const vs = voices(3, 24);
    const { segments, windows } = conversation([0, 1, 0, 1, 0, 1], vs, 25);
    const r = rng(26);
    const blip: AudioSegment = { id: 6, start: 24, end: 25.6, text: 'hm' };
    const out = diarize([...segments, blip], [...windows, windowOf(vs[2], r, 24, 25.6)]);
    expect(new Set(out.map((s) => s.speaker))).to.deep.equal(new Set(['SPEAKER_1', 'SPEAKER_2']));
    // Heard for longer, the third voice is a speaker.
    const longer: AudioSegment = { id: 6, start: 24, end: 28, text: 'a b c' };
    const three = diarize(
      [...segments, longer],
      [...windows, ...[24, 24.8, 25.6, 26.4].map((t) => windowOf(vs[2], r, t, t + 1.6))],
    );
    expect(three.at(-1)!.speaker).to.equal('SPEAKER_3');
  });

  it('no windows at all: every segment is SPEAKER_1', () => {
    const { segments } = conversation([0, 1], voices(2, 17), 18);
    expect(diarize(segments, []).map((s) => s.speaker)).to.deep.equal(['SPEAKER_1', 'SPEAKER_1']);
  });

  it('clusterEmbeddings: merges by average cosine down to the threshold, or further to the cluster cap', () => {
    const v = (a: number, b: number) => Float64Array.from(normed([a, b]));
    const points = [v(1, 0), v(0.99, 0.1), v(0, 1), v(0.1, 0.99)];
    const weights = [1, 1, 1, 1];
    const two = clusterEmbeddings(points, weights, 0.9);
    expect(two.assignment).to.deep.equal([0, 0, 1, 1]);
    expect(clusterEmbeddings(points, weights, 0.9, 1).assignment).to.deep.equal([0, 0, 0, 0]);
    expect(clusterEmbeddings(points, weights, 0.999).assignment).to.deep.equal([0, 1, 2, 3]);
  });
});
