import type { AudioSegment } from './result-shapes';

/**
 * Speaker labels from speaker embeddings (`diarize=true`): the local engine embeds each 1.6 s window of the speech
 * (providers/speech/engine/speaker_encoder.py, Resemblyzer's GE2E encoder); here, across every chunk of a recording,
 * segments are clustered by their mean embedding and every word takes the speaker of the window around it. Pure code
 * (no engine, no I/O): unit-tested on its own.
 */

/** One window of speech on the recording's time line and its speaker embedding (unit length). */
export interface SpeakerWindow {
  start: number;
  end: number;
  embedding: number[];
}

export interface DiarizeOptions {
  /** At most this many speakers: clusters are merged past the similarity threshold until there are no more. */
  maxSpeakers?: number;
  /** Clusters at least this similar (average cosine between their pieces) are one speaker. */
  threshold?: number;
}

/**
 * Average cosine similarity above which two clusters of speech are one voice. Calibrated on 14 recordings (espeak-ng
 * voices; the human voices of the Asterisk prompt packages, bench/README.md), with clusters under 3 windows folded into
 * the nearest speaker: at 0.75, 12 of 14 got the right number of speakers; the two others were split (one person
 * speaking two languages; a woman's telephone voice in three), with 14-15 % of the speech mislabelled. At 0.70 two
 * were merged instead (two women on a telephone line; two male espeak-ng voices) with 25-47 % mislabelled, and
 * `max_speakers` can merge but never split.
 */
export const DEFAULT_SPEAKER_THRESHOLD = 0.75;
/** A speaker change inside a segment counts from this many consecutive windows of the other voice (about 2.4 s). */
const MIN_TURN_WINDOWS = 2;
/** Windows a speaker needs (about 3 s of speech, in any number of turns). */
const MIN_SPEAKER_WINDOWS = 3;
/** Windows per clustered piece (0.8 s apart: about 3 s of speech). */
const PIECE_WINDOWS = 3;

const dot = (a: Float64Array, b: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const unit = (v: Float64Array): Float64Array => {
  const n = Math.sqrt(dot(v, v)) || 1;
  return v.map((x) => x / n);
};

/** Pieces clustered at most: a longer recording clusters an even sample of them and assigns the rest. */
const MAX_CLUSTERED = 2000;

/**
 * Agglomerative clustering of weighted unit vectors by average linkage (the weighted mean of the pairwise cosines
 * between two clusters): the two most similar clusters merge while their similarity is at least `threshold`, or while
 * there are more than `maxClusters`. Average linkage, not centroid: the centroids of big clusters lose their noise and
 * drift together, and a piece holding two voices would bridge them. Returns a cluster index per vector (0, 1, ... in
 * order of first appearance) and the clusters' unit centroids.
 */
export function clusterEmbeddings(
  vectors: Float64Array[],
  weights: number[],
  threshold: number,
  maxClusters = Infinity,
): { assignment: number[]; centroids: Float64Array[] } {
  const n = vectors.length;
  const sim = new Float32Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) sim[i * n + j] = sim[j * n + i] = dot(vectors[i], vectors[j]);
  const size = [...weights];
  const alive = new Array<boolean>(n).fill(true);
  const parent = Array.from({ length: n }, (_, i) => i);
  // Each cluster's most similar other cluster. A merge only lowers or averages similarities (Lance-Williams), so only
  // the rows that pointed at the merged pair need a new scan.
  const best = new Int32Array(n).fill(-1);
  const bestSim = new Float64Array(n).fill(-Infinity);
  const refresh = (i: number) => {
    best[i] = -1;
    bestSim[i] = -Infinity;
    for (let j = 0; j < n; j++) {
      if (j === i || !alive[j]) continue;
      const v = sim[i * n + j];
      if (v > bestSim[i]) [best[i], bestSim[i]] = [j, v];
    }
  };
  for (let i = 0; i < n; i++) refresh(i);
  let count = n;
  while (count > 1) {
    let a = -1;
    for (let i = 0; i < n; i++) if (alive[i] && best[i] >= 0 && (a < 0 || bestSim[i] > bestSim[a])) a = i;
    if (a < 0 || (bestSim[a] < threshold && count <= maxClusters)) break;
    const b = best[a];
    for (let k = 0; k < n; k++) {
      if (!alive[k] || k === a || k === b) continue;
      const v = (size[a] * sim[a * n + k] + size[b] * sim[b * n + k]) / (size[a] + size[b]);
      sim[a * n + k] = sim[k * n + a] = v;
    }
    size[a] += size[b];
    alive[b] = false;
    parent[b] = a;
    count -= 1;
    refresh(a);
    for (let k = 0; k < n; k++) if (alive[k] && k !== a && (best[k] === a || best[k] === b)) refresh(k);
  }
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const ids = new Map<number, number>();
  const sums: Float64Array[] = [];
  const assignment = vectors.map((v, i) => {
    const r = root(i);
    if (!ids.has(r)) {
      ids.set(r, sums.length);
      sums.push(new Float64Array(v.length));
    }
    const c = ids.get(r)!;
    for (let k = 0; k < v.length; k++) sums[c][k] += v[k] * weights[i];
    return c;
  });
  return { assignment, centroids: sums.map(unit) };
}

const argmax = (v: Float64Array, centroids: Float64Array[]): number => {
  let best = 0;
  let sim = -Infinity;
  centroids.forEach((c, i) => {
    const s = dot(v, c);
    if (s > sim) [best, sim] = [i, s];
  });
  return best;
};

/**
 * The segments with `speaker` on each segment and each word. Windows belong to the segment holding their midpoint;
 * pieces of up to three consecutive windows of a segment (about 3 s) are clustered by their mean; every window then
 * takes the nearest speaker's centroid, and a run of at least two windows of another speaker inside a segment is a turn
 * its words show (shorter runs are noise of 1.6 s windows straddling a pause). A segment's speaker is the one who
 * speaks most of its words' time. A segment without a window (shorter than 0.3 s) takes the speaker before it (or the
 * first speaker, at the start).
 */
export function diarize(segments: AudioSegment[], windows: SpeakerWindow[], opts: DiarizeOptions = {}): AudioSegment[] {
  const threshold = opts.threshold ?? DEFAULT_SPEAKER_THRESHOLD;
  const perSegment: { mid: number; v: Float64Array }[][] = segments.map(() => []);
  const sorted = [...windows].sort((a, b) => a.start - b.start);
  let si = 0;
  for (const w of sorted) {
    const mid = (w.start + w.end) / 2;
    while (si < segments.length && segments[si].end <= mid) si += 1;
    // A window before its segment's start (times clamped by stitching): the segment it overlaps most is this one.
    const at = si < segments.length ? si : segments.length - 1;
    if (at < 0) break;
    perSegment[at].push({ mid, v: Float64Array.from(w.embedding) });
  }
  const embedded = segments.map((_, i) => i).filter((i) => perSegment[i].length > 0);
  if (embedded.length === 0) return segments.map((s) => withSpeaker(s, 'SPEAKER_1'));
  // Pieces of at most PIECE_WINDOWS consecutive windows (about 3 s): a segment that holds a turn is clustered in parts.
  const pieces: { segment: number; v: Float64Array; weight: number }[] = [];
  for (const i of embedded) {
    const ws = perSegment[i];
    const parts = Math.ceil(ws.length / PIECE_WINDOWS);
    for (let p = 0; p < parts; p++) {
      const group = ws.slice(Math.floor((p * ws.length) / parts), Math.floor(((p + 1) * ws.length) / parts));
      const m = new Float64Array(group[0].v.length);
      for (const { v } of group) for (let k = 0; k < m.length; k++) m[k] += v[k];
      pieces.push({ segment: i, v: unit(m), weight: group.length });
    }
  }
  // A long recording: an even sample is clustered, every window then goes to its nearest speaker all the same.
  const step = Math.max(1, pieces.length / MAX_CLUSTERED);
  const sample = Array.from({ length: Math.min(pieces.length, MAX_CLUSTERED) }, (_, k) => pieces[Math.floor(k * step)]);
  const clusters = clusterEmbeddings(
    sample.map((p) => p.v),
    sample.map((p) => p.weight),
    threshold,
    opts.maxSpeakers ?? Infinity,
  );
  // A cluster of less than MIN_SPEAKER_WINDOWS windows (about 3 s of speech) is not a speaker of its own: a cough, a
  // laugh, a word at a turn; its windows go to the nearest real speaker.
  const weight = clusters.centroids.map(() => 0);
  clusters.assignment.forEach((c, k) => (weight[c] += sample[k].weight));
  const kept = clusters.centroids.filter((_, c) => weight[c] >= MIN_SPEAKER_WINDOWS);
  const centroids = kept.length ? kept : clusters.centroids;
  // Every window to its nearest speaker; runs shorter than a turn inside a segment take the segment's majority.
  const labelled = segments.map((_, i) => {
    const wins = perSegment[i].map((w) => ({ mid: w.mid, c: argmax(w.v, centroids) }));
    const votes = new Map<number, number>();
    for (const w of wins) votes.set(w.c, (votes.get(w.c) ?? 0) + 1);
    const own = [...votes].sort((x, y) => y[1] - x[1])[0]?.[0];
    for (let k = 0; k < wins.length;) {
      let e = k;
      while (e < wins.length && wins[e].c === wins[k].c) e += 1;
      if (e - k < MIN_TURN_WINDOWS && own !== undefined) for (let j = k; j < e; j++) wins[j].c = own;
      k = e;
    }
    return { wins, own };
  });
  // Labels in order of first speech.
  const order = new Map<number, string>();
  for (const { wins } of labelled)
    for (const w of wins) if (!order.has(w.c)) order.set(w.c, `SPEAKER_${order.size + 1}`);
  const label = (c: number) => order.get(c)!;
  let previous: string | undefined;
  const firstLabel = label(labelled.find((l) => l.own !== undefined)!.own!);
  return segments.map((s, i) => {
    const { wins, own } = labelled[i];
    if (own === undefined) return withSpeaker(s, (previous ??= firstLabel));
    if (!s.words?.length) return withSpeaker(s, (previous = label(own)));
    const words = s.words.map((w) => {
      const mid = (w.start + w.end) / 2;
      let near = wins[0];
      for (const x of wins) if (Math.abs(x.mid - mid) < Math.abs(near.mid - mid)) near = x;
      return { ...w, speaker: label(near.c) };
    });
    const time = new Map<string, number>();
    for (const w of words) time.set(w.speaker, (time.get(w.speaker) ?? 0) + Math.max(w.end - w.start, 0.01));
    const top = [...time].sort((a, b) => b[1] - a[1])[0][0];
    previous = top;
    return { ...s, words, speaker: top };
  });
}

function withSpeaker(s: AudioSegment, speaker: string): AudioSegment {
  return { ...s, speaker, ...(s.words ? { words: s.words.map((w) => ({ ...w, speaker })) } : {}) };
}
