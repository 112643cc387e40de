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
  /** Clusters whose centroids are at least this similar (cosine) are one speaker. */
  threshold?: number;
}

/**
 * Cosine similarity above which two clusters of speech are one voice. GE2E embeddings of one speaker's segments lie
 * at 0.80-0.95 of each other; different speakers at 0.45-0.78 (measured on espeak-ng voices and on the human voices
 * of the Asterisk prompt packages, bench/README.md).
 */
export const DEFAULT_SPEAKER_THRESHOLD = 0.78;
/** A speaker change inside a segment counts from this many consecutive windows of the other voice (about 2.4 s). */
const MIN_TURN_WINDOWS = 2;

const dot = (a: Float64Array, b: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const unit = (v: Float64Array): Float64Array => {
  const n = Math.sqrt(dot(v, v)) || 1;
  return v.map((x) => x / n);
};

/**
 * Agglomerative clustering of weighted unit vectors by centroid cosine: the two most similar clusters merge while
 * their similarity is at least `threshold`, or while there are more than `maxClusters`. Returns a cluster index per
 * vector (0, 1, ... in no particular order) and the clusters' unit centroids.
 */
export function clusterEmbeddings(
  vectors: Float64Array[],
  weights: number[],
  threshold: number,
  maxClusters = Infinity,
): { assignment: number[]; centroids: Float64Array[] } {
  const n = vectors.length;
  const sums = vectors.map((v, i) => v.map((x) => x * weights[i]));
  const dirs = sums.map(unit);
  const alive = new Array<boolean>(n).fill(true);
  const parent = Array.from({ length: n }, (_, i) => i);
  // Each cluster's most similar other cluster (kept up to date, so a merge costs O(n) rows, not O(n^2)).
  const best = new Int32Array(n).fill(-1);
  const bestSim = new Float64Array(n).fill(-Infinity);
  const refresh = (i: number) => {
    best[i] = -1;
    bestSim[i] = -Infinity;
    for (let j = 0; j < n; j++) {
      if (j === i || !alive[j]) continue;
      const s = dot(dirs[i], dirs[j]);
      if (s > bestSim[i]) [best[i], bestSim[i]] = [j, s];
    }
  };
  for (let i = 0; i < n; i++) refresh(i);
  let count = n;
  while (count > 1) {
    let a = -1;
    for (let i = 0; i < n; i++) if (alive[i] && best[i] >= 0 && (a < 0 || bestSim[i] > bestSim[a])) a = i;
    if (a < 0 || (bestSim[a] < threshold && count <= maxClusters)) break;
    const b = best[a];
    for (let k = 0; k < sums[a].length; k++) sums[a][k] += sums[b][k];
    dirs[a] = unit(sums[a]);
    alive[b] = false;
    parent[b] = a;
    count -= 1;
    refresh(a);
    for (let k = 0; k < n; k++) {
      if (!alive[k] || k === a) continue;
      if (best[k] === a || best[k] === b) refresh(k);
      else {
        const s = dot(dirs[k], dirs[a]);
        if (s > bestSim[k]) [best[k], bestSim[k]] = [a, s];
      }
    }
  }
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const ids = new Map<number, number>();
  const centroids: Float64Array[] = [];
  const assignment = vectors.map((_, i) => {
    const r = root(i);
    if (!ids.has(r)) {
      ids.set(r, centroids.length);
      centroids.push(dirs[r]);
    }
    return ids.get(r)!;
  });
  return { assignment, centroids };
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
 * a segment is clustered by the mean of its windows; a window takes the nearest speaker's centroid, and a run of at
 * least two windows of another speaker inside a segment is a turn its words show (shorter runs are noise of 1.6 s
 * windows straddling a pause). A segment's speaker is the one who speaks most of its words' time. A segment without a
 * window (shorter than 0.3 s) takes the speaker before it (or after it, at the start).
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
  const means = embedded.map((i) => {
    const m = new Float64Array(perSegment[i][0].v.length);
    for (const { v } of perSegment[i]) for (let k = 0; k < m.length; k++) m[k] += v[k];
    return unit(m);
  });
  const { assignment, centroids } = clusterEmbeddings(
    means,
    embedded.map((i) => perSegment[i].length),
    threshold,
    opts.maxSpeakers ?? Infinity,
  );
  // Labels in order of first speech.
  const order = new Map<number, string>();
  for (const c of assignment) if (!order.has(c)) order.set(c, `SPEAKER_${order.size + 1}`);
  const label = (c: number) => order.get(c)!;
  const segmentCluster = new Map<number, number>(embedded.map((i, k) => [i, assignment[k]]));
  let previous: string | undefined;
  const firstLabel = label(assignment[0]);
  return segments.map((s, i) => {
    const own = segmentCluster.get(i);
    if (own === undefined) return withSpeaker(s, (previous ??= firstLabel));
    const wins = perSegment[i].map((w) => ({ mid: w.mid, c: argmax(w.v, centroids) }));
    // Runs shorter than a turn take the segment's own speaker.
    for (let k = 0; k < wins.length;) {
      let e = k;
      while (e < wins.length && wins[e].c === wins[k].c) e += 1;
      if (e - k < MIN_TURN_WINDOWS) for (let j = k; j < e; j++) wins[j].c = own;
      k = e;
    }
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
